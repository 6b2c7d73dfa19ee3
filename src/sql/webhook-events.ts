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
import { qualify } from '../db/qualify.js'

/** A row of `webhook_events` as pg reads it. */
export const WebhookEventRowSchema = Type.Object({
  id: Type.String(),
  source: Type.String(),
  provider: Nullable(Type.String()),
  event_type: Nullable(Type.String()),
  dedupe_key: Type.String(),
  /** The bytes as received, stored once: the JSON view is built on read. */
  payload: Opaque<Buffer>(),
  content_type: Nullable(Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  signature: Nullable(Type.String()),
  request_id: Nullable(Type.String()),
  received_at: Type.Date(),
  /** When the last attempt began. */
  started_at: Nullable(Type.Date()),
  status: Type.Union(EVENT_STATUSES.map((status) => Type.Literal(status))),
  /** Attempts since the last replay. */
  attempts: Type.Integer(),
  last_error: Nullable(Type.String()),
  error_class: Nullable(Type.String()),
  processed_at: Nullable(Type.Date()),
  job_id: Nullable(Type.String()),
  retry_schedule: Type.Array(Type.Integer()),
  replay_generation: Type.Integer(),
  /** 1; a row migrated from 0011, which kept one row per id, counts the deliveries it stood for. */
  deliveries: Type.Integer(),
  /** A migrated row's delivery before the last (a delivery is now a row of its own). */
  previous_delivery: Nullable(Type.Record(Type.String(), Type.Unknown())),
  updated_at: Type.Date()
})
export type WebhookEventRow = Static<typeof WebhookEventRowSchema>

/** A statement and its values. */
export interface Plan { text: string, values: unknown[] }

/** `received_at` as PostgreSQL prints it, to the microsecond, for a cursor. */
interface ReceivedAtText { received_at_text: string }

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
export type DetailRow = Omit<WebhookEventRow, 'dedupe_key' | 'retry_schedule' | 'updated_at' | 'started_at'> & ReceivedAtText

/**
 * The latest delivery of id `$1` with all it holds, and the one before it when there is one (a delivery is a
 * row of its own): the second row is the diff's "before". `deliveries` counts them all.
 */
export const detail = (schema: string): string =>
  `SELECT ${ITEM_COLUMNS}, e.payload, e.content_type, e.headers, e.signature, e.request_id, e.job_id, e.processed_at,
    sum(e.deliveries) OVER ()::int AS deliveries, e.replay_generation, e.previous_delivery
    FROM ${qualify(schema, 'webhook_events')} e WHERE e.id = $1 ORDER BY e.received_at DESC LIMIT 2`

/** The job the latest delivery of event `$1` is on. */
export const jobOf = (schema: string): string =>
  `SELECT job_id FROM ${qualify(schema, 'webhook_events')} WHERE id = $1 ORDER BY received_at DESC LIMIT 1`

/** An event as a replay returns it: what its job is rebuilt from, and what it was before (a `dead` one has a dead letter `d_<old_job_id>`). */
export type ReplayedRow = Pick<WebhookEventRow, 'id' | 'source' | 'provider' | 'event_type' | 'dedupe_key' | 'payload' | 'content_type' | 'headers'
  | 'signature' | 'request_id' | 'received_at' | 'retry_schedule'> & ReceivedAtText & { job_id: string, old_job_id: string | null, old_status: string }

/**
 * Back to `received` in a new replay generation; a `done` outcome is kept in the attempt log first (the row was
 * its record). A dead event goes onto the job a replay of its dead letter makes (`r_d_<job>`, under the same
 * dedupe key): a journal replay and a dead-letter replay of it, in either order or at once, make one job. Any
 * other event goes onto a job of its replay generation and delivery (the id and received_at, digested).
 */
const RESET = `status = 'received', attempts = 0, started_at = NULL, processed_at = NULL, updated_at = now(),
  replay_generation = e.replay_generation + 1,
  job_id = CASE WHEN o.old_status = 'dead' AND o.old_job_id IS NOT NULL THEN '${REPLAY_JOB_PREFIX}${DEAD_JOB_PREFIX}' || o.old_job_id
    ELSE '${JOURNAL_REPLAY_JOB_PREFIX}' || (e.replay_generation + 1) || '_' || md5(e.id || ' ' || to_char(e.received_at AT TIME ZONE 'UTC', 'YYYYMMDDHH24MISSUS')) END`
const RETURNING = `RETURNING e.id, e.source, e.provider, e.event_type, e.dedupe_key, e.payload, e.content_type, e.headers,
  e.signature, e.request_id, e.received_at, e.received_at::text AS received_at_text, e.retry_schedule, e.job_id,
  o.old_job_id, o.old_status, o.old_attempts, o.old_started_at, o.old_processed_at`
/** The rows' own columns a replay reads before it moves them, on the alias `e`. */
const OLD = 'e.id, e.received_at, e.job_id AS old_job_id, e.status AS old_status, e.attempts AS old_attempts, e.started_at AS old_started_at, e.processed_at AS old_processed_at'
/** The CTE that keeps the `done` outcomes the rows `moved` stood for in the attempt log. */
const keptDone = (schema: string): string => `kept AS (INSERT INTO ${qualify(schema, 'webhook_event_failures')}
    (event_id, event_received_at, attempt, started_at, finished_at, status, job_id)
    SELECT id, received_at, old_attempts, old_started_at, coalesce(old_processed_at, now()), 'done', old_job_id FROM moved WHERE old_status = 'done')`

/** Replays the latest delivery of event `$1`, its row locked, if a replay may take it; no row when it may not or does not exist. */
export const replay = (schema: string): string => {
  const events = qualify(schema, 'webhook_events')
  return `WITH o AS (SELECT ${OLD} FROM ${events} e WHERE e.id = $1 ORDER BY e.received_at DESC LIMIT 1 FOR UPDATE),
      moved AS (UPDATE ${events} e SET ${RESET} FROM o WHERE e.id = o.id AND e.received_at = o.received_at AND ${REPLAYABLE} ${RETURNING}),
      ${keptDone(schema)}
    SELECT * FROM moved`
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
        SELECT ${OLD} FROM ${events} e WHERE ${all(where)}
          AND (e.received_at, e.id COLLATE "C") > ($1::timestamptz, $2::text COLLATE "C")
        ORDER BY e.received_at, e.id COLLATE "C" LIMIT $3 FOR UPDATE SKIP LOCKED),
      moved AS (UPDATE ${events} e SET ${RESET} FROM picked o WHERE e.id = o.id AND e.received_at = o.received_at ${RETURNING}),
      ${keptDone(schema)}
      SELECT * FROM moved ORDER BY received_at, id COLLATE "C"`,
    values
  }
}
