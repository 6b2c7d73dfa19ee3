/**
 * The journal's event statements, one each, and its row. Retention and the stats read `webhook_events_received_at`,
 * the admin list `webhook_events_received_at` backwards (or `webhook_events_status_received_at` for a status).
 * Statements that take an event filter are plans: the statement with its values, from the typed filter.
 */
import { Type, type Static } from '@sinclair/typebox'
import { DEAD_JOB_PREFIX, JOURNAL_REPLAY_JOB_PREFIX, REPLAY_JOB_PREFIX } from '../shared/constants.js'
import { Nullable, Opaque } from '../shared/schemas.js'
import { EVENT_STATUSES } from '../event-log/event-item.js'
import type { ResolvedFilter } from '../event-log/event-filter.js'
import { qualify } from './qualify.js'

/** A row of `webhook_events` as pg reads it. */
export const WebhookEventRowSchema = Type.Object({
  id: Type.String(),
  source: Type.String(),
  provider: Nullable(Type.String()),
  event_type: Nullable(Type.String()),
  dedupe_key: Type.String(),
  payload: Opaque<Buffer>(),
  /** The payload parsed, when it is JSON PostgreSQL takes. */
  payload_json: Type.Unknown(),
  content_type: Nullable(Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  signature: Nullable(Type.String()),
  request_id: Nullable(Type.String()),
  received_at: Type.Date(),
  status: Type.Union(EVENT_STATUSES.map((status) => Type.Literal(status))),
  /** Attempts since the last replay. */
  attempts: Type.Integer(),
  last_error: Nullable(Type.String()),
  error_class: Nullable(Type.String()),
  processed_at: Nullable(Type.Date()),
  job_id: Nullable(Type.String()),
  retry_schedule: Type.Array(Type.Integer()),
  replay_generation: Type.Integer(),
  /** Deliveries of this id under another dedupe key (the provider sent it again), the first included. */
  deliveries: Type.Integer(),
  /** What the delivery before the last one was, for the diff. */
  previous_delivery: Nullable(Type.Record(Type.String(), Type.Unknown())),
  updated_at: Type.Date()
})
export type WebhookEventRow = Static<typeof WebhookEventRowSchema>

/** A statement and its values. */
export interface Plan { text: string, values: unknown[] }

/** `received_at` as PostgreSQL prints it, to the microsecond, for a cursor. */
interface ReceivedAtText { received_at_text: string }

/**
 * One retention batch: `$1` days, `$2` the batch. The ids go through an array, so the outer delete probes the
 * primary key instead of a hash semi-join over the table; rows another transaction holds wait for the next pass.
 */
export const deleteExpired = (schema: string): string => {
  const events = qualify(schema, 'webhook_events')
  return `DELETE FROM ${events} WHERE id = ANY (ARRAY(
    SELECT id FROM ${events} WHERE received_at < now() - make_interval(days => $1) LIMIT $2 FOR UPDATE SKIP LOCKED))`
}

/** Counts by status, provider and type of the events received at or after `$1`. */
export const stats = (schema: string): string =>
  `SELECT status, provider, event_type, count(*) AS n FROM ${qualify(schema, 'webhook_events')}
   WHERE received_at >= $1 GROUP BY status, provider, event_type`

/** Events a replay may take, on the alias `e`: not those already queued or running. */
const REPLAYABLE = "e.status NOT IN ('received', 'processing')"

/** The filter's conditions on events aliased `e`, each value added to `values` as the next parameter. */
function matching (filter: ResolvedFilter, values: unknown[]): string[] {
  const $ = (value: unknown): string => `$${values.push(value)}`
  const where: string[] = []
  if (filter.provider !== undefined) where.push(`e.provider = ${$(filter.provider)}`)
  if (filter.source !== undefined) where.push(`e.source = ${$(filter.source)}`)
  if (filter.type !== undefined) where.push(`e.event_type = ${$(filter.type)}`)
  if (filter.statuses !== undefined) where.push(`e.status = ANY(${$(filter.statuses)}::text[])`)
  if (filter.errorClass !== undefined) where.push(`e.error_class = ${$(filter.errorClass)}`)
  if (filter.since !== undefined) where.push(`e.received_at >= ${$(filter.since)}`)
  if (filter.until !== undefined) where.push(`e.received_at < ${$(filter.until)}`)
  if (filter.text !== undefined) where.push(`position(convert_to(${$(filter.text)}, 'UTF8') in e.payload) > 0`)
  return where
}

const all = (conditions: string[]): string => conditions.length === 0 ? 'TRUE' : conditions.join(' AND ')

/** How many events the filter matches; with `replayable`, only those a replay may take. */
export function count (schema: string, filter: ResolvedFilter, replayable = false): Plan {
  const values: unknown[] = []
  const where = matching(filter, values)
  if (replayable) where.push(REPLAYABLE)
  return { text: `SELECT count(*) AS n FROM ${qualify(schema, 'webhook_events')} e WHERE ${all(where)}`, values }
}

const ITEM_COLUMNS = 'e.id, e.source, e.provider, e.event_type, e.status, e.attempts, e.received_at, e.received_at::text AS received_at_text, e.last_error, e.error_class'

/** An event as a list shows it. */
export type ItemRow = Pick<WebhookEventRow, 'id' | 'source' | 'provider' | 'event_type' | 'status' | 'attempts' | 'received_at' | 'last_error' | 'error_class'>
  & ReceivedAtText

/** The admin list, newest first: up to `limit` events the filter matches, before the cursor's (received_at, id) if given. */
export function list (schema: string, filter: ResolvedFilter, limit: number, before?: readonly [receivedAt: unknown, id: unknown]): Plan {
  const values: unknown[] = []
  const where = matching(filter, values)
  if (before !== undefined) where.push(`(e.received_at, e.id) < ($${values.push(before[0])}::timestamptz, $${values.push(before[1])})`)
  return {
    text: `SELECT ${ITEM_COLUMNS} FROM ${qualify(schema, 'webhook_events')} e WHERE ${all(where)} ORDER BY e.received_at DESC, e.id DESC LIMIT $${values.push(limit)}`,
    values
  }
}

/** An event with all it holds. */
export type DetailRow = Omit<WebhookEventRow, 'dedupe_key' | 'retry_schedule' | 'updated_at'> & ReceivedAtText

/** One event with all it holds: `$1` id. */
export const detail = (schema: string): string =>
  `SELECT ${ITEM_COLUMNS}, e.payload, e.payload_json, e.content_type, e.headers, e.signature,
    e.request_id, e.job_id, e.processed_at, e.deliveries, e.replay_generation, e.previous_delivery
    FROM ${qualify(schema, 'webhook_events')} e WHERE e.id = $1`

/** The job event `$1` is on. */
export const jobOf = (schema: string): string => `SELECT job_id FROM ${qualify(schema, 'webhook_events')} WHERE id = $1`

/** An event as a replay returns it: what its job is rebuilt from, and what it was before (a `dead` one has a dead letter `d_<old_job_id>`). */
export type ReplayedRow = Pick<WebhookEventRow, 'id' | 'source' | 'provider' | 'event_type' | 'dedupe_key' | 'payload' | 'content_type' | 'headers'
  | 'signature' | 'request_id' | 'received_at' | 'retry_schedule'> & ReceivedAtText & { job_id: string, old_job_id: string | null, old_status: string }

/**
 * Back to `received` in a new replay generation. A dead event goes onto the job a replay of its dead letter
 * makes (`r_d_<job>`, under the same dedupe key): a journal replay and a dead-letter replay of it, in either
 * order or at once, make one job. Any other event goes onto a job of its replay generation.
 */
const RESET = `status = 'received', attempts = 0, processed_at = NULL, updated_at = now(),
  replay_generation = e.replay_generation + 1,
  job_id = CASE WHEN o.old_status = 'dead' AND o.old_job_id IS NOT NULL THEN '${REPLAY_JOB_PREFIX}${DEAD_JOB_PREFIX}' || o.old_job_id
    ELSE '${JOURNAL_REPLAY_JOB_PREFIX}' || (e.replay_generation + 1) || '_' || md5(e.id) END`
const RETURNING = `RETURNING e.id, e.source, e.provider, e.event_type, e.dedupe_key, e.payload, e.content_type, e.headers,
  e.signature, e.request_id, e.received_at, e.received_at::text AS received_at_text, e.retry_schedule, e.job_id,
  o.old_job_id, o.old_status`

/** Replays event `$1`, its row locked, if a replay may take it; no row when it may not or does not exist. */
export const replay = (schema: string): string => {
  const events = qualify(schema, 'webhook_events')
  return `UPDATE ${events} e SET ${RESET}
    FROM (SELECT id, job_id AS old_job_id, status AS old_status FROM ${events} WHERE id = $1 FOR UPDATE) o
    WHERE e.id = o.id AND ${REPLAYABLE} ${RETURNING}`
}

/**
 * Replays up to `limit` events the filter matches after the cursor's (received_at, id), oldest first, skipping
 * rows another replay holds. RETURNING keeps no order: the outer SELECT sorts, so the last row is the next
 * cursor. Ids compare bytewise (COLLATE "C"), so the cursor's order never depends on the database's collation.
 */
export function replayPage (schema: string, filter: ResolvedFilter, after: readonly [receivedAt: string, id: string], limit: number): Plan {
  const events = qualify(schema, 'webhook_events')
  const values: unknown[] = [...after, limit]
  const where = [...matching(filter, values), REPLAYABLE]
  return {
    text: `WITH picked AS (
        SELECT e.id, e.job_id AS old_job_id, e.status AS old_status FROM ${events} e WHERE ${all(where)}
          AND (e.received_at, e.id COLLATE "C") > ($1::timestamptz, $2::text COLLATE "C")
        ORDER BY e.received_at, e.id COLLATE "C" LIMIT $3 FOR UPDATE SKIP LOCKED),
      moved AS (UPDATE ${events} e SET ${RESET} FROM picked o WHERE e.id = o.id ${RETURNING})
      SELECT * FROM moved ORDER BY received_at, id COLLATE "C"`,
    values
  }
}

/**
 * The worker's start of events, `$1`…`$15` arrays of one value an event: id, source, provider, event type,
 * dedupe key, payload, JSON view, content type, headers, signature, request id, received at, attempt, job,
 * retry schedule. The row says `processing`; the ids taken come back.
 *
 * A new delivery of an id (another dedupe key: the provider sent it again, re-signed) keeps what the last one
 * was in `previous_delivery`, for the diff; a retry or a replay of the same delivery does not. A job of the
 * same delivery that a journal replay has since moved to another job takes nothing when it is a retry (a
 * retry that was waiting): its event runs on the replay's job. A first attempt still takes it (a dead-letter
 * replay's job, or the same delivery accepted again after the dedupe window). A job that has committed its
 * `done` takes nothing: the row says so when the job holds it (read as it is now, not as the statement began),
 * its attempt log when not.
 */
export const start = (schema: string): string =>
  `INSERT INTO ${qualify(schema, 'webhook_events')} AS e (id, source, provider, event_type, dedupe_key, payload, payload_json, content_type,
      headers, signature, request_id, received_at, status, attempts, job_id, retry_schedule)
    SELECT v.id, v.source, v.provider, v.event_type, v.dedupe_key, v.payload, v.payload_json::jsonb, v.content_type,
      v.headers::jsonb, v.signature, v.request_id, v.received_at, 'processing', v.attempts, v.job_id, v.retry::integer[]
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::text[], $8::text[],
      $9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::int[], $14::text[], $15::text[])
      AS v(id, source, provider, event_type, dedupe_key, payload, payload_json, content_type, headers, signature,
        request_id, received_at, attempts, job_id, retry)
    ON CONFLICT (id) DO UPDATE SET
      status = 'processing', attempts = EXCLUDED.attempts, job_id = EXCLUDED.job_id, updated_at = now(),
      deliveries = e.deliveries + (e.dedupe_key <> EXCLUDED.dedupe_key)::int,
      previous_delivery = CASE WHEN e.dedupe_key <> EXCLUDED.dedupe_key THEN jsonb_build_object(
        'payload', encode(e.payload, 'base64'), 'headers', e.headers, 'signature', e.signature,
        'receivedAt', e.received_at, 'jobId', e.job_id, 'requestId', e.request_id) ELSE e.previous_delivery END,
      dedupe_key = EXCLUDED.dedupe_key, payload = EXCLUDED.payload, payload_json = EXCLUDED.payload_json,
      content_type = EXCLUDED.content_type, headers = EXCLUDED.headers, signature = EXCLUDED.signature,
      request_id = EXCLUDED.request_id, received_at = EXCLUDED.received_at, retry_schedule = EXCLUDED.retry_schedule
    WHERE NOT (e.dedupe_key = EXCLUDED.dedupe_key AND e.job_id IS DISTINCT FROM EXCLUDED.job_id
      AND starts_with(coalesce(e.job_id, ''), '${JOURNAL_REPLAY_JOB_PREFIX}') AND EXCLUDED.attempts > 1)
      AND NOT (e.status = 'done' AND e.job_id = EXCLUDED.job_id)
      AND NOT EXISTS (SELECT 1 FROM ${qualify(schema, 'webhook_event_done')} AS d WHERE d.event_id = e.id AND d.job_id = EXCLUDED.job_id)
    RETURNING e.id`

/**
 * The outcomes, `$first`… arrays of one value an event: id, job, attempt, status, last error, error class,
 * started at. Only the job that holds the row may finish it: a late outcome of an earlier job never overwrites
 * a replay's, and nothing overwrites a `done`. An outcome of a job that has committed its `done` (another run of
 * it, or this run before a crash cut its status write) is `done`. A failed attempt is logged in the same
 * statement, only for the rows marked; a `done` gets its mark unless its transaction wrote it. As CTEs, so the
 * combined statement can carry them too (PostgreSQL takes data-modifying WITH only at the top level).
 */
function finishing (schema: string, first: number): string {
  const $ = (n: number): string => `$${n + first - 1}`
  const done = qualify(schema, 'webhook_event_done')
  return `marked AS (UPDATE ${qualify(schema, 'webhook_events')} AS e SET status = v.status, attempts = v.attempts, last_error = v.last_error,
      error_class = v.error_class, processed_at = CASE WHEN v.status = 'done' THEN now() ELSE e.processed_at END,
      updated_at = now()
    FROM (SELECT u.id, u.job_id, u.attempts, u.started_at, d.event_id IS NOT NULL AS committed,
        CASE WHEN d.event_id IS NULL THEN u.status ELSE 'done' END AS status,
        CASE WHEN d.event_id IS NULL THEN u.last_error END AS last_error, CASE WHEN d.event_id IS NULL THEN u.error_class END AS error_class
      FROM unnest(${$(1)}::text[], ${$(2)}::text[], ${$(3)}::int[], ${$(4)}::text[], ${$(5)}::text[], ${$(6)}::text[], ${$(7)}::timestamptz[])
        AS u(id, job_id, attempts, status, last_error, error_class, started_at)
      LEFT JOIN ${done} AS d ON d.event_id = u.id AND d.job_id = u.job_id) AS v
    WHERE e.id = v.id AND e.job_id = v.job_id AND e.status <> 'done'
    RETURNING v.id, v.job_id, v.attempts, v.status, v.last_error, v.error_class, v.started_at, v.committed),
  failed AS (INSERT INTO ${qualify(schema, 'webhook_event_failures')} (event_id, attempt, started_at, status, error_class, error, job_id)
    SELECT id, attempts, started_at, 'failed', error_class, last_error, job_id FROM marked WHERE status <> 'done' RETURNING 1),
  logged AS (INSERT INTO ${done} (event_id, job_id, attempt, started_at)
    SELECT id, job_id, attempts, started_at FROM marked WHERE status = 'done' AND NOT committed ON CONFLICT DO NOTHING RETURNING 1)`
}

/** The outcomes, `$1`…`$7` as `finishing` says; no ids back. */
export const finish = (schema: string): string => `WITH ${finishing(schema, 1)} SELECT (SELECT count(*) FROM marked) AS finished`

/** `start` (`$1`…`$15`) and `finish` (`$16`…`$22`) in one statement, so a mixed batch costs one round trip and one commit; the ids started come back. */
export const startAndFinish = (schema: string): string => `WITH started AS (${start(schema)}), ${finishing(schema, 16)} SELECT id FROM started`
