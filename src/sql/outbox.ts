/** The outbox's statements. */
import { qualify } from './qualify.js'

/** Pending and failed counts and the oldest pending message's age, each from a partial index (0008, 0001). */
export const stats = (schema: string): string => {
  const outbox = qualify(schema, 'outbox')
  return `SELECT (SELECT count(*) FROM ${outbox} WHERE status = 'pending')::int AS pending,
      (SELECT count(*) FROM ${outbox} WHERE status = 'failed')::int AS failed,
      extract(epoch FROM now() - (SELECT min(created_at) FROM ${outbox} WHERE status = 'pending'))::float8 AS oldest`
}

/**
 * Retention: up to `$2` finished messages idle for `$1` seconds, oldest first (outbox_finished), deleted with
 * their delivery log. OFFSET 0 keeps the check for recent attempts a probe per message (as an anti-join the
 * planner may hash the whole log); the deletes take the ids as an array, so each reads its table's key.
 */
export const deleteIdle = (schema: string): string => {
  const outbox = qualify(schema, 'outbox')
  const deliveries = qualify(schema, 'deliveries')
  const cutoff = 'now() - make_interval(secs => $1)'
  return `WITH doomed AS (
      SELECT o.id FROM ${outbox} o
      WHERE o.status <> 'pending' AND o.created_at < ${cutoff} AND greatest(o.dispatched_at, o.next_attempt_at) < ${cutoff}
        AND NOT EXISTS (SELECT 1 FROM ${deliveries} d WHERE d.message_id = o.id AND d.created_at >= ${cutoff} OFFSET 0)
      ORDER BY o.created_at LIMIT $2 FOR UPDATE OF o SKIP LOCKED),
    logged AS (DELETE FROM ${deliveries} d WHERE d.message_id = ANY (ARRAY(SELECT id FROM doomed)) RETURNING 1),
    gone AS (DELETE FROM ${outbox} o WHERE o.id = ANY (ARRAY(SELECT id FROM doomed)) RETURNING 1)
    SELECT (SELECT count(*) FROM gone)::int AS messages, (SELECT count(*) FROM logged)::int AS deliveries`
}
