/**
 * The statements of `ordered_deliveries` (migration 0016): a keyed message's delivery to one endpoint, from its fan-out
 * until its outcome is final. Per endpoint and key the lowest `seq` is the head (`ready`, then `queued` once its job
 * is added) and the others wait. Whoever inserts rows of a pair or removes its head first takes the pair's lock
 * (`lockPairs`, a transaction-scoped advisory lock): each next statement then sees the other's commit, so a follower
 * inserted while its head goes is never left waiting with no head.
 */
import { qualify } from '../db/qualify.js'

/** A pair's lock key: the key's hash seeded with the endpoint's. */
const pairLock = (endpoint: string, key: string): string => `hashtextextended(${key}, hashtext(${endpoint}))`

/** Locks the pairs of endpoints `$1` (text[]) and key `$2` until the transaction ends, in one order (no deadlock). */
export const lockPairs = (): string =>
  `SELECT pg_advisory_xact_lock(l.k) FROM (SELECT DISTINCT ${pairLock('e', '$2')} AS k FROM unnest($1::text[]) e ORDER BY 1) l`

/**
 * Message `$4` (key `$2`, number `$3`) to each of endpoints `$1` (text[]), under their pairs' locks: the head of a
 * pair with nothing before it, else waiting. A repeated fan-out adds nothing; an endpoint deleted meanwhile is skipped.
 */
export const enqueue = (schema: string): string => {
  const table = qualify(schema, 'ordered_deliveries')
  return `INSERT INTO ${table} (endpoint_id, ordering_key, seq, message_id, state)
    SELECT e.id, $2, $3, $4, CASE WHEN EXISTS (SELECT 1 FROM ${table} w WHERE w.endpoint_id = e.id AND w.ordering_key = $2 AND w.seq < $3)
      THEN 'waiting' ELSE 'ready' END
    FROM ${qualify(schema, 'endpoints')} e WHERE e.id = ANY ($1::text[])
    ON CONFLICT DO NOTHING`
}

/** Up to `$1` heads whose job is still to be added, first published first, with their message (nulls: it is gone). */
export const ready = (schema: string): string =>
  `SELECT w.endpoint_id, w.ordering_key, w.message_id, o.id, o.public_type, o.tenant, o.data, o.created_at
   FROM ${qualify(schema, 'ordered_deliveries')} w LEFT JOIN ${qualify(schema, 'outbox')} o ON o.id = w.message_id
   WHERE w.state = 'ready' ORDER BY w.seq LIMIT $1`

/** The head of message `$1` to endpoint `$2` (key `$3`) has its job. */
export const markQueued = (schema: string): string =>
  `UPDATE ${qualify(schema, 'ordered_deliveries')} SET state = 'queued'
   WHERE message_id = $1 AND endpoint_id = $2 AND ordering_key = $3 AND state = 'ready'`

/** The lock of the one pair of endpoint `$1` and key `$2`. */
export const lockPair = (): string => `SELECT pg_advisory_xact_lock(${pairLock('$1', '$2')})`

/**
 * Message `$1`'s delivery to endpoint `$2` (key `$3`) is final: its row goes, and when it was the pair's head the
 * next one is made ready, with a NOTIFY on `$4` (sent on commit) that wakes a dispatcher to add its job. Run under
 * the pair's lock. The statement's one snapshot still shows the deleted row: the next is the lowest of the others.
 */
export const release = (schema: string): string => {
  const table = qualify(schema, 'ordered_deliveries')
  return `WITH gone AS (DELETE FROM ${table} WHERE message_id = $1 AND endpoint_id = $2 AND ordering_key = $3 RETURNING seq),
    head AS (SELECT seq FROM ${table} WHERE endpoint_id = $2 AND ordering_key = $3 ORDER BY seq LIMIT 1),
    next AS (UPDATE ${table} n SET state = 'ready'
      FROM (SELECT seq FROM ${table} WHERE endpoint_id = $2 AND ordering_key = $3 AND seq NOT IN (SELECT seq FROM gone) ORDER BY seq LIMIT 1) m
      WHERE n.endpoint_id = $2 AND n.ordering_key = $3 AND n.seq = m.seq AND n.state = 'waiting'
        AND (SELECT seq FROM gone) = (SELECT seq FROM head)
      RETURNING n.seq)
    SELECT pg_notify($4, ''), seq FROM next`
}
