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
