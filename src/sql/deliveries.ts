/**
 * The delivery log's statements, one each, and its row. A failed or started attempt is `resolved` once its
 * message reached the same endpoint (migration 0008): the undelivered view and recover walk the unresolved
 * ones only, so their cost follows what is undelivered, not the size of the log. The log is partitioned by day
 * (migration 0028): a row is found by its id in the one day its id says (`keyed`), and a message's rows in the days
 * since it was created (`sinceMessage`), never in every day.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../shared/schemas.js'
import { qualify } from '../db/qualify.js'

/** A row of `deliveries` as pg reads it (bigint ids as text). */
export const DeliveryRowSchema = Type.Object({
  id: Type.String(),
  message_id: Type.String(),
  endpoint_id: Type.String(),
  attempt: Type.Integer(),
  status: Type.Union([Type.Literal('started'), Type.Literal('success'), Type.Literal('failed')]),
  http_status: Nullable(Type.Integer()),
  duration_ms: Type.Integer(),
  error_class: Nullable(Type.String()),
  error: Nullable(Type.String()),
  response_head: Nullable(Type.String()),
  /** What was sent besides the body and the answer's headers, capped and redacted (migration 0012). */
  request_headers: Nullable(Type.Record(Type.String(), Type.String())),
  response_headers: Nullable(Type.Record(Type.String(), Type.String())),
  payload_sha256: Type.String(),
  created_at: Type.Date(),
  job_id: Nullable(Type.String()),
  resolved: Type.Boolean(),
  /** How many of its job's stalls the row accounts for (migration 0013); null on older rows and rows of no job. */
  job_stalls: Nullable(Type.Integer()),
  /** The message's creation time, tenant and type, for re-send by filter (migration 0020); null on rows written before it. */
  message_created_at: Nullable(Type.Date()),
  message_tenant: Nullable(Type.String()),
  message_type: Nullable(Type.String()),
  /** When its message was erased (migration 0025): its bodies (answer's head, error, headers) are gone, the row stays. */
  erased_at: Nullable(Type.Date())
})
export type DeliveryRow = Static<typeof DeliveryRowSchema>

/**
 * Each attempt's row carries its message's creation time, tenant and type (migration 0020), read by the outbox's
 * key as the row is written: re-send by filter walks the unresolved failures in that order (outbox.failedPage).
 */
const MESSAGE_COLUMNS = 'message_created_at, message_tenant, message_type'
const messageValues = (schema: string, message: string): string =>
  ['created_at', 'tenant', 'type'].map((column) => `(SELECT ${column} FROM ${qualify(schema, 'outbox')} WHERE id = ${message})`).join(', ')

/**
 * Row `id` (a parameter or a column) of the delivery log, read in the day its id says: an id holds its row's
 * second (migration 0028's delivery_from and delivery_until), so the planner prunes every other day.
 */
export const keyed = (schema: string, id: string, alias = ''): string =>
  `${alias}id = ${id} AND ${alias}created_at >= ${qualify(schema, 'delivery_from')}(${id}) AND ${alias}created_at < ${qualify(schema, 'delivery_until')}(${id})`

/** Rows older than a cursor's id (`id`, a bigint parameter, or null for the first page), read in the days up to its row's only. */
const before = (schema: string, id: string, alias = ''): string =>
  `(${id}::bigint IS NULL OR (${alias}id < ${id} AND ${alias}created_at < ${qualify(schema, 'delivery_until')}(${id})))`

/** The other attempts of row `row`'s pair, read in the days since its message was created (the row carries that time: migration 0020). */
const pairDays = (row: string): string => `a.created_at >= coalesce(${row}.message_created_at, '-infinity')`

/**
 * The days a message's rows may be in: from its creation on (an attempt follows its message), read by the outbox's
 * key; every day when the message is gone. `message` a parameter or column, `alias` the log's.
 */
export const sinceMessage = (schema: string, message: string, alias = ''): string =>
  `${alias}created_at >= coalesce((SELECT m.created_at FROM ${qualify(schema, 'outbox')} m WHERE m.id = ${message}), '-infinity')`

/** What a list row shows besides the attempt: its event's type and its endpoint's URL, probed by key for the page's rows only. */
const shownWith = (schema: string): string =>
  `(SELECT e.url FROM ${qualify(schema, 'endpoints')} e WHERE e.id = d.endpoint_id) AS endpoint_url,
   (SELECT o.public_type FROM ${qualify(schema, 'outbox')} o WHERE o.id = d.message_id) AS event_type`

/** The admin list, newest first: `$1` endpoint, `$2` status, `$3` since (each null for any), `$4` before this id or null, `$5` limit. */
export const list = (schema: string): string =>
  `SELECT d.*, ${shownWith(schema)} FROM (
     SELECT * FROM ${qualify(schema, 'deliveries')}
     WHERE ($1::text IS NULL OR endpoint_id = $1) AND ($2::text IS NULL OR status = $2)
       AND ($3::timestamptz IS NULL OR created_at >= $3) AND ${before(schema, '$4')}
     ORDER BY id DESC LIMIT $5) d
   ORDER BY d.id DESC`

/**
 * `list` over one tenant's endpoints only (a portal token's view): `$1`…`$5` as there, `$6` the tenant. Each of the
 * tenant's endpoints gives its newest page by its own index, so the cost follows the tenant's log, not the whole one.
 */
export const listOfTenant = (schema: string): string =>
  `SELECT d.*, e.url AS endpoint_url, (SELECT o.public_type FROM ${qualify(schema, 'outbox')} o WHERE o.id = d.message_id) AS event_type
   FROM ${qualify(schema, 'endpoints')} e, LATERAL (
     SELECT * FROM ${qualify(schema, 'deliveries')}
     WHERE endpoint_id = e.id AND ($2::text IS NULL OR status = $2)
       AND ($3::timestamptz IS NULL OR created_at >= $3) AND ${before(schema, '$4')}
     ORDER BY id DESC LIMIT $5) d
   WHERE e.tenant = $6 AND ($1::text IS NULL OR e.id = $1)
   ORDER BY d.id DESC LIMIT $5`

/** `$1` id. */
export const byId = (schema: string): string => `SELECT * FROM ${qualify(schema, 'deliveries')} WHERE ${keyed(schema, '$1')}`

/** A message's attempts, first first: `$1` message. */
export const ofMessage = (schema: string): string =>
  `SELECT * FROM ${qualify(schema, 'deliveries')} WHERE message_id = $1 AND ${sinceMessage(schema, '$1')} ORDER BY id`

/** An attempt before its POST: `$1` message, `$2` endpoint, `$3` job, `$4` attempt, `$5` payload hash. */
export const start = (schema: string): string =>
  `INSERT INTO ${qualify(schema, 'deliveries')} (message_id, endpoint_id, job_id, attempt, status, duration_ms, payload_sha256, ${MESSAGE_COLUMNS})
   VALUES ($1, $2, $3, $4, 'started', 0, $5, ${messageValues(schema, '$1')}) RETURNING id`

/**
 * The outcome of a started attempt: `$1` its id; `$2`…`$9` status, HTTP status, duration, error class, error,
 * answer's head, request headers, answer's headers.
 */
export const complete = (schema: string): string =>
  `UPDATE ${qualify(schema, 'deliveries')} SET status = $2, http_status = $3, duration_ms = $4, error_class = $5, error = $6, response_head = $7,
     request_headers = $8, response_headers = $9
   WHERE ${keyed(schema, '$1')} AND status = 'started' RETURNING id`

/** An outcome with no started row: `$1`…`$8` as `complete`'s `$2`…`$9`, then message, endpoint, attempt, payload hash. */
export const insertOutcome = (schema: string): string =>
  `INSERT INTO ${qualify(schema, 'deliveries')} (status, http_status, duration_ms, error_class, error, response_head, request_headers, response_headers,
     message_id, endpoint_id, attempt, payload_sha256, ${MESSAGE_COLUMNS})
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, ${messageValues(schema, '$9')}) RETURNING id`

/** A job's rows, first first: `$1` message, `$2` endpoint, `$3` job (read through the pair's index). */
export const ofJob = (schema: string): string =>
  `SELECT id, attempt, status, http_status, error_class, job_stalls FROM ${qualify(schema, 'deliveries')}
   WHERE message_id = $1 AND endpoint_id = $2 AND job_id = $3 AND ${sinceMessage(schema, '$1')} ORDER BY id`

/** A job's attempts left started become stalled failures, accounting for `$3` stalls: `$1` job, `$2` the error. */
export const settleStarted = (schema: string): string =>
  `UPDATE ${qualify(schema, 'deliveries')} SET status = 'failed', error_class = 'stalled', error = $2, job_stalls = $3
   WHERE job_id = $1 AND status = 'started' RETURNING attempt`

/** A row now accounts for `$2` stalls of its job: `$1` its id. */
export const accountStalls = (schema: string): string =>
  `UPDATE ${qualify(schema, 'deliveries')} SET job_stalls = $2 WHERE ${keyed(schema, '$1')}`

/** A stall that left no row: `$1` message, `$2` endpoint, `$3` job, `$4` attempt, `$5` error, `$6` payload hash, `$7` the stalls it accounts for. */
export const insertStall = (schema: string): string =>
  `INSERT INTO ${qualify(schema, 'deliveries')} (message_id, endpoint_id, job_id, attempt, status, duration_ms, error_class, error, payload_sha256, job_stalls,
     ${MESSAGE_COLUMNS}) VALUES ($1, $2, $3, $4, 'failed', 0, 'stalled', $5, $6, $7, ${messageValues(schema, '$1')})`

/** A success of `$1` message to `$2` endpoint since `$3`. */
export const deliveredSince = (schema: string): string =>
  `SELECT 1 FROM ${qualify(schema, 'deliveries')} WHERE message_id = $1 AND endpoint_id = $2 AND status = 'success' AND created_at >= $3 LIMIT 1`

/**
 * After a success: `$1` message, `$2` endpoint. The pair's earlier failures leave the unresolved index. Only
 * finished failures, and only those no other transaction holds: it never waits, so no delivery waits on it and
 * two successes of a pair cannot deadlock. A row it leaves is still read as delivered (every reader checks the
 * pair for a success); `resolved` only keeps it out of the walks.
 */
export const resolvePair = (schema: string): string => {
  const deliveries = qualify(schema, 'deliveries')
  return `UPDATE ${deliveries} SET resolved = true WHERE id = ANY (ARRAY(
     SELECT id FROM ${deliveries} WHERE message_id = $1 AND endpoint_id = $2 AND status = 'failed' AND NOT resolved AND ${sinceMessage(schema, '$1')}
     FOR UPDATE SKIP LOCKED)) AND ${sinceMessage(schema, '$1')}`
}

/**
 * Message and endpoint pairs with attempts and no success, the latest attempt first: the unresolved attempts
 * that are their pair's last, walked in an index that holds the pair's ids (each pair summed up by
 * deliveries_message), then the page's rows read by key. `$1` endpoint or null, `$2` the last id of the
 * previous page or null, `$3` the limit.
 */
export const undelivered = (schema: string): string => {
  const deliveries = qualify(schema, 'deliveries')
  return `SELECT d.id AS last_id, d.message_id, d.endpoint_id, page.attempts, d.created_at AS last_attempt_at,
      d.http_status AS last_http_status, d.error AS last_error,
      (SELECT o.public_type FROM ${qualify(schema, 'outbox')} o WHERE o.id = d.message_id) AS type
    FROM (
      SELECT u.id, pair.attempts FROM ${deliveries} u, LATERAL (
        SELECT max(a.id) AS last_id, count(*)::int AS attempts, bool_or(a.status = 'success') AS delivered
        FROM ${deliveries} a WHERE a.message_id = u.message_id AND a.endpoint_id = u.endpoint_id AND ${pairDays('u')}) pair
      WHERE u.status <> 'success' AND NOT u.resolved AND pair.last_id = u.id AND NOT pair.delivered
        AND ($1::text IS NULL OR u.endpoint_id = $1) AND ${before(schema, '$2', 'u.')}
      ORDER BY u.id DESC LIMIT $3) page
    JOIN ${deliveries} d ON ${keyed(schema, 'page.id', 'd.')}
    ORDER BY d.id DESC`
}

/**
 * What `recover` re-sends: the messages an endpoint (`$1`) failed since a time (`$2`), with no success and no
 * attempt in flight, still in the outbox; first failed first. Such a pair's attempts are all unresolved
 * failures, so its last one is a candidate since `$2`: the walk reads only the endpoint's recent failures.
 */
export const failedSince = (schema: string): string => {
  const deliveries = qualify(schema, 'deliveries')
  return `SELECT d.message_id FROM ${deliveries} d, LATERAL (
      SELECT bool_or(a.status <> 'failed') AS delivered_or_running, max(a.created_at) AS last_at, min(a.id) AS first_id
      FROM ${deliveries} a WHERE a.message_id = d.message_id AND a.endpoint_id = d.endpoint_id AND ${pairDays('d')}) pair
    WHERE d.endpoint_id = $1 AND d.status <> 'success' AND NOT d.resolved AND d.created_at >= $2::timestamptz
      AND NOT pair.delivered_or_running AND pair.last_at >= $2::timestamptz
      AND EXISTS (SELECT 1 FROM ${qualify(schema, 'outbox')} o WHERE o.id = d.message_id)
    GROUP BY d.message_id ORDER BY min(pair.first_id)`
}
