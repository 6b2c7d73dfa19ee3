/**
 * The delivery log's statements. A failed or started attempt is `resolved` once its message reached the same
 * endpoint (migration 0008): the undelivered view and recover walk the unresolved ones only, so their cost
 * follows what is undelivered, not the size of the log.
 */
import { qualify } from './qualify.js'

/** After a success: `$1` message, `$2` endpoint. The pair's earlier failures leave the unresolved index. */
export const resolvePair = (schema: string): string =>
  `UPDATE ${qualify(schema, 'deliveries')} SET resolved = true
   WHERE message_id = $1 AND endpoint_id = $2 AND status <> 'success' AND NOT resolved`

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
        FROM ${deliveries} a WHERE a.message_id = u.message_id AND a.endpoint_id = u.endpoint_id) pair
      WHERE u.status <> 'success' AND NOT u.resolved AND pair.last_id = u.id AND NOT pair.delivered
        AND ($1::text IS NULL OR u.endpoint_id = $1) AND ($2::bigint IS NULL OR u.id < $2)
      ORDER BY u.id DESC LIMIT $3) page
    JOIN ${deliveries} d ON d.id = page.id
    ORDER BY d.id DESC`
}

/**
 * What `recover` re-sends: the messages an endpoint (`$1`) failed since a time (`$2`), with no success and no
 * attempt in flight, still in the outbox; first failed first.
 */
export const failedSince = (schema: string): string => {
  const deliveries = qualify(schema, 'deliveries')
  return `SELECT d.message_id FROM ${deliveries} d, LATERAL (
      SELECT bool_or(a.status <> 'failed') AS delivered_or_running, max(a.created_at) AS last_at
      FROM ${deliveries} a WHERE a.message_id = d.message_id AND a.endpoint_id = d.endpoint_id) pair
    WHERE d.endpoint_id = $1 AND d.status <> 'success' AND NOT d.resolved
      AND NOT pair.delivered_or_running AND pair.last_at >= $2::timestamptz
      AND EXISTS (SELECT 1 FROM ${qualify(schema, 'outbox')} o WHERE o.id = d.message_id)
    GROUP BY d.message_id ORDER BY min(d.id)`
}

/**
 * Retention: attempts older than the cutoff (`$1` seconds) whose message is gone (a re-send racing the pass, a
 * message deleted by hand), `$2` at most, oldest first. OFFSET 0 keeps the outbox check a probe of its key per
 * row: as an anti-join the planner may hash the whole outbox.
 */
export const deleteOrphans = (schema: string): string => {
  const deliveries = qualify(schema, 'deliveries')
  return `WITH orphans AS (
      SELECT d.id FROM ${deliveries} d
      WHERE d.created_at < now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM ${qualify(schema, 'outbox')} o WHERE o.id = d.message_id OFFSET 0)
      ORDER BY d.created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    DELETE FROM ${deliveries} WHERE id = ANY (ARRAY(SELECT id FROM orphans))`
}
