/**
 * The journal's event statements, one each. Retention and the stats read `webhook_events_received_at`, the
 * admin list `webhook_events_received_at` backwards (or `webhook_events_status_received_at` for a status).
 */
import { qualify } from './qualify.js'

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
export const REPLAYABLE = "e.status NOT IN ('received', 'processing')"

/** How many events (aliased `e`) meet `where`, a filter's condition with its parameters. */
export const count = (schema: string, where: string): string =>
  `SELECT count(*) AS n FROM ${qualify(schema, 'webhook_events')} e WHERE ${where}`

const ITEM_COLUMNS = 'e.id, e.source, e.provider, e.event_type, e.status, e.attempts, e.received_at, e.received_at::text AS received_at_text, e.last_error, e.error_class'

/** The admin list, newest first: events (aliased `e`) that meet `where`, at most `$limit` of them. */
export const list = (schema: string, where: string, limit: number): string =>
  `SELECT ${ITEM_COLUMNS} FROM ${qualify(schema, 'webhook_events')} e WHERE ${where} ORDER BY e.received_at DESC, e.id DESC LIMIT $${limit}`

/** One event with all it holds: `$1` id. */
export const detail = (schema: string): string =>
  `SELECT ${ITEM_COLUMNS}, e.payload, e.payload_json, e.content_type, e.headers, e.signature,
    e.request_id, e.job_id, e.processed_at, e.deliveries, e.replay_generation, e.previous_delivery
    FROM ${qualify(schema, 'webhook_events')} e WHERE e.id = $1`
