/** The outbox's statements, one each, and its row; then those of its keyed messages per endpoint (`ordered_deliveries`). */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../shared/schemas.js'
import { operationalReceivers } from './endpoints.js'
import { qualify } from '../db/qualify.js'

/** A row of `outbox` as pg reads it. */
export const OutboxRowSchema = Type.Object({
  id: Type.String(),
  type: Type.String(),
  public_type: Nullable(Type.String()),
  tenant: Nullable(Type.String()),
  /** The data as JSON text, so every delivery sends the same bytes. */
  data: Type.String(),
  created_at: Type.Date(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('dispatched'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  next_attempt_at: Type.Date(),
  last_error: Nullable(Type.String()),
  lease_owner: Nullable(Type.String()),
  lease_until: Nullable(Type.Date()),
  dispatched_at: Nullable(Type.Date()),
  /** One of Anvil's operational events (migration 0011), fanned out to the operational endpoints. */
  operational: Type.Boolean(),
  /** Its ordering key (migration 0021): delivered to each endpoint after the key's earlier messages there. */
  ordering_key: Nullable(Type.String()),
  /** Its place in its key's publish order (bigint, as text); null without a key. */
  ordering_seq: Nullable(Type.String()),
  /** The W3C trace context it was published in (migration 0024), carried by each delivery; null outside a trace. */
  traceparent: Nullable(Type.String()),
  tracestate: Nullable(Type.String()),
  /** The data subject it was published for (migration 0025): `DELETE /admin/subjects/:subject` erases it. */
  subject: Nullable(Type.String())
})
export type OutboxRow = Static<typeof OutboxRowSchema>

/** `$1` id. */
export const byId = (schema: string): string => `SELECT * FROM ${qualify(schema, 'outbox')} WHERE id = $1`

/** `$1` id, its row locked until the transaction ends (a re-send decides under it). */
export const lockById = (schema: string): string => `SELECT * FROM ${qualify(schema, 'outbox')} WHERE id = $1 FOR UPDATE`

const insert = (schema: string): string => `WITH inserted AS (
    INSERT INTO ${qualify(schema, 'outbox')} (id, type, public_type, tenant, data, status, traceparent, tracestate, subject)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
    ON CONFLICT (id) DO NOTHING RETURNING id, status)`

/**
 * A message (`$1`…`$9`: id, type, public type, tenant, data, status, traceparent, tracestate, subject); its id back
 * when it is new and pending.
 */
export const publish = (schema: string): string => `${insert(schema)} SELECT id FROM inserted WHERE status = 'pending'`

/**
 * A message with an ordering key: `$1`…`$9` as `publish`, `$10` the key. The (tenant, key)'s lock is taken first and
 * held until the transaction ends, then the next number: two publishes of one key commit in the order of their numbers.
 * `$11` the NOTIFY channel, or null for none.
 */
export const publishKeyed = (schema: string): string => `WITH locked AS (SELECT pg_advisory_xact_lock(hashtextextended($10, hashtext(coalesce($4, '')))) AS l),
  inserted AS (
    INSERT INTO ${qualify(schema, 'outbox')} (id, type, public_type, tenant, data, status, traceparent, tracestate, subject, ordering_key, ordering_seq)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, nextval('${qualify(schema, 'outbox_ordering_seq').replace(/'/g, "''")}') FROM locked
    ON CONFLICT (id) DO NOTHING RETURNING id, status)
  SELECT CASE WHEN $11::text IS NULL THEN NULL ELSE pg_notify($11, '') END, id FROM inserted WHERE status = 'pending'`

/**
 * `publish`, and a NOTIFY on channel `$10` sent on commit. The payload is empty: PostgreSQL folds a
 * transaction's notifications into one.
 */
export const publishAndNotify = (schema: string): string => `${insert(schema)} SELECT pg_notify($10, ''), id FROM inserted WHERE status = 'pending'`

/**
 * An operational event (`$1`…`$4`: id, type, tenant, data), only when someone receives it (`$5`: whether tenants
 * may), with a NOTIFY on channel `$6` sent on commit; its id back when it is new. A repeated id adds nothing.
 */
export const publishOperational = (schema: string): string => `WITH inserted AS (
    INSERT INTO ${qualify(schema, 'outbox')} (id, type, public_type, tenant, data, status, operational)
    SELECT $1, $2, $2, $3, $4, 'pending', true
    WHERE EXISTS (SELECT 1 FROM ${qualify(schema, 'endpoints')} e WHERE ${operationalReceivers('$3', '$2', '$5')})
    ON CONFLICT (id) DO NOTHING RETURNING id)
  SELECT pg_notify($6, ''), id FROM inserted`

/**
 * Up to `$3` due pending messages, leased to `$1` for `$2` ms, each attempt counted, fair between tenants: up to
 * `$3` tenants with pending messages, those after the cursor `$4` first and then from the start (each found by a
 * skip scan of outbox_tenant_due; '' is the operator's messages, no tenant); each tenant's oldest due messages,
 * ranked within it; the batch takes every tenant's first, then every second, and so on. A tenant with thousands
 * pending takes one place a round, as a tenant with one does. Candidates are read without a lock and locked in
 * rank order with SKIP LOCKED, so dispatchers at once take different rows. Each row comes back with its tenant's
 * key and turn: the next claim's cursor is the key of the highest turn. A keyed message is a candidate only once no
 * earlier one of its key (and tenant) is pending (outbox_ordering_pending): a key's messages fan out in its order.
 */
export const claim = (schema: string): string => {
  const outbox = qualify(schema, 'outbox')
  const key = "coalesce(tenant, '')"
  const due = (o: string): string => `${o}status = 'pending' AND ${o}next_attempt_at <= now() AND (${o}lease_until IS NULL OR ${o}lease_until <= now())`
  /** The first tenant key with pending messages that `where` admits, or null. */
  const first = (where: string): string => `(SELECT ${key} FROM ${outbox} WHERE status = 'pending' AND ${where} ORDER BY ${key} LIMIT 1)`
  return `WITH RECURSIVE past_cursor (key, n) AS (
      SELECT ${first(`${key} > $4::text`)}, 1
      UNION ALL SELECT ${first(`${key} > p.key`)}, p.n + 1 FROM past_cursor p WHERE p.key IS NOT NULL AND p.n < $3),
    from_start (key, n) AS (
      SELECT ${first(`${key} <= $4::text`)}, 1
      UNION ALL SELECT ${first(`${key} > s.key AND ${key} <= $4::text`)}, s.n + 1 FROM from_start s WHERE s.key IS NOT NULL AND s.n < $3),
    tenants AS (
      SELECT key, row_number() OVER (ORDER BY side, n) AS turn FROM (
        SELECT key, n, 0 AS side FROM past_cursor WHERE key IS NOT NULL
        UNION ALL SELECT key, n, 1 FROM from_start WHERE key IS NOT NULL) found
      ORDER BY side, n LIMIT $3),
    candidates AS (
      SELECT c.id, t.key, t.turn, row_number() OVER (PARTITION BY t.key ORDER BY c.next_attempt_at) AS rank
      FROM tenants t CROSS JOIN LATERAL (
        SELECT id, next_attempt_at FROM ${outbox} k WHERE ${key} = t.key AND ${due('')}
          AND (k.ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM ${outbox} p WHERE p.ordering_key = k.ordering_key
            AND p.status = 'pending' AND p.ordering_seq < k.ordering_seq AND p.tenant IS NOT DISTINCT FROM k.tenant))
        ORDER BY next_attempt_at LIMIT $3) c)
  UPDATE ${outbox} o SET attempts = o.attempts + 1, lease_owner = $1, lease_until = now() + $2 * interval '1 millisecond'
    FROM (SELECT o.id, c.key, c.turn FROM candidates c JOIN ${outbox} o ON o.id = c.id WHERE ${due('o.')}
          ORDER BY c.rank, c.turn LIMIT $3 FOR UPDATE OF o SKIP LOCKED) due
    WHERE o.id = due.id
    RETURNING o.id, o.public_type, o.tenant, o.data, o.created_at, o.attempts, o.operational, o.ordering_key, o.ordering_seq, o.traceparent, o.tracestate,
      due.key AS tenant_key,
      due.turn::int AS turn`
}

/** Message `$1`, leased to `$2`, fanned out. */
export const markDispatched = (schema: string): string =>
  `UPDATE ${qualify(schema, 'outbox')} SET status = 'dispatched', dispatched_at = now(), last_error = NULL, lease_owner = NULL, lease_until = NULL
   WHERE id = $1 AND lease_owner = $2`

/** Message `$1`, leased to `$2`, waits `$3` ms with its attempt given back (Redis's failure, not the message's); `$4` why. */
export const giveBack = (schema: string): string =>
  `UPDATE ${qualify(schema, 'outbox')} SET attempts = attempts - 1, next_attempt_at = now() + $3 * interval '1 millisecond', last_error = $4,
     lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`

/** Message `$1`, leased to `$2`, failed its dispatch: status `$3` (pending again, or failed), next try in `$4` ms, `$5` why. */
export const dispatchFailed = (schema: string): string =>
  `UPDATE ${qualify(schema, 'outbox')} SET status = $3, next_attempt_at = now() + $4 * interval '1 millisecond', last_error = $5,
     lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`

/** A message re-sent by hand counts as dispatched again: `$1` id. */
export const markResent = (schema: string): string =>
  `UPDATE ${qualify(schema, 'outbox')} SET status = 'dispatched', dispatched_at = now() WHERE id = $1`

/** An operator's test message, dispatched at once: `$1` id, `$2` type (public too), `$3` tenant, `$4` data. */
export const insertTest = (schema: string): string =>
  `INSERT INTO ${qualify(schema, 'outbox')} (id, type, public_type, tenant, data, status, dispatched_at)
   VALUES ($1, $2, $2, $3, $4, 'dispatched', now()) RETURNING created_at`

/**
 * The failed messages a re-send filter matches, oldest first: `$1` type, `$2` tenant, `$3` since, `$4` until
 * (each null for any), `$5` and `$6` the last (created_at, id) of the previous page or null, `$7` 'dispatch',
 * 'delivery' or null for both, `$8` the limit. Failed dispatches are walked in creation order from the cursor
 * on (outbox_failed, or outbox_failed_tenant or _type when the filter names one: migration 0022). Failed deliveries are walked in the same order in the unresolved failures, whose rows carry
 * their message's creation time, tenant and type (migration 0020: deliveries_undelivered_created, or _tenant or
 * _type when the filter names one), each message then read by its key (LATERAL with OFFSET 0: a probe, never a
 * hash join over the outbox). An attempt follows its message: a lower bound on the messages' time is one on the
 * attempts' days (migration 0028), so a later page or a window reads no day before it. A page reads the failures of the messages it returns and stops: a filter that
 * matches nothing reads nothing, however large the outage.
 */
export const failedPage = (schema: string): string => {
  const outbox = qualify(schema, 'outbox')
  const deliveries = qualify(schema, 'deliveries')
  const matches = (table: string, created: string, id: string, type: string, tenant: string): string =>
    `($1::text IS NULL OR ${table}.${type} = $1) AND ($2::text IS NULL OR ${table}.${tenant} = $2)
      AND ($3::timestamptz IS NULL OR ${table}.${created} >= $3) AND ($4::timestamptz IS NULL OR ${table}.${created} < $4)
      AND ($5::timestamptz IS NULL OR (${table}.${created} >= $5 AND (${table}.${created}, ${table}.${id}) > ($5, $6)))`
  return `SELECT id, created_at::text AS at FROM (
      (SELECT o.id, o.created_at FROM ${outbox} o
        WHERE $7::text IS DISTINCT FROM 'delivery' AND o.status = 'failed' AND ${matches('o', 'created_at', 'id', 'type', 'tenant')}
        ORDER BY o.created_at, o.id LIMIT $8)
      UNION ALL
      (SELECT DISTINCT ON (d.message_created_at, d.message_id) o.id, o.created_at FROM ${deliveries} d
        CROSS JOIN LATERAL (SELECT o.id, o.created_at FROM ${outbox} o WHERE o.id = d.message_id AND o.status = 'dispatched' OFFSET 0) o
        WHERE $7::text IS DISTINCT FROM 'dispatch' AND d.status = 'failed' AND NOT d.resolved AND d.message_created_at IS NOT NULL
          AND ${matches('d', 'message_created_at', 'message_id', 'message_type', 'message_tenant')}
          AND d.created_at >= coalesce($5::timestamptz, $3::timestamptz, '-infinity')
        ORDER BY d.message_created_at, d.message_id LIMIT $8)) AS failed
    ORDER BY created_at, id LIMIT $8`
}

/** Pending and failed counts and the oldest pending message's age, each from a partial index (0008, 0001). */
export const stats = (schema: string): string => {
  const outbox = qualify(schema, 'outbox')
  return `SELECT (SELECT count(*) FROM ${outbox} WHERE status = 'pending')::int AS pending,
      (SELECT count(*) FROM ${outbox} WHERE status = 'failed')::int AS failed,
      extract(epoch FROM now() - (SELECT min(created_at) FROM ${outbox} WHERE status = 'pending'))::float8 AS oldest`
}

/**
 * Retention: up to `$2` finished messages idle for `$1` seconds, oldest first (outbox_finished), deleted. Their
 * delivery log goes with its days (migration 0028: src/outbox/outbox-retention.ts), not row by row. OFFSET 0 keeps
 * the check for recent attempts a probe per message in the days since the cutoff (as an anti-join the planner may
 * hash the whole log); the delete takes the ids as an array, so it reads the outbox's key. A keyed message still
 * waiting for its turn at an endpoint (ordered_deliveries) is kept, however long its key's head fails.
 */
export const deleteIdle = (schema: string): string => {
  const outbox = qualify(schema, 'outbox')
  const deliveries = qualify(schema, 'deliveries')
  const cutoff = 'now() - make_interval(secs => $1)'
  return `WITH doomed AS (
      SELECT o.id FROM ${outbox} o
      WHERE o.status <> 'pending' AND o.created_at < ${cutoff} AND greatest(o.dispatched_at, o.next_attempt_at) < ${cutoff}
        AND NOT EXISTS (SELECT 1 FROM ${deliveries} d WHERE d.message_id = o.id AND d.created_at >= ${cutoff} OFFSET 0)
        AND NOT EXISTS (SELECT 1 FROM ${qualify(schema, 'ordered_deliveries')} w WHERE w.message_id = o.id OFFSET 0)
      ORDER BY o.created_at LIMIT $2 FOR UPDATE OF o SKIP LOCKED),
    gone AS (DELETE FROM ${outbox} o WHERE o.id = ANY (ARRAY(SELECT id FROM doomed)) RETURNING 1)
    SELECT count(*)::int AS messages FROM gone`
}

/*
 * `ordered_deliveries` (migration 0021), kept with the outbox's statements (src/sql holds the 16 files a folder may):
 * a keyed message's delivery to one endpoint, from its fan-out until its outcome is final. Per endpoint and key the
 * lowest `seq` is the head (`ready`, then `queued` once its job is added) and the others wait. Whoever inserts rows of
 * a pair or removes its head first takes the pair's lock (`lockOrderedPairs`, a transaction-scoped advisory lock):
 * each next statement then sees the other's commit, so a follower inserted while its head goes is never left waiting
 * with no head.
 */

/** A pair's lock key: the key's hash seeded with the endpoint's. */
const pairLock = (endpoint: string, key: string): string => `hashtextextended(${key}, hashtext(${endpoint}))`

/** Locks the pairs of endpoints `$1` (text[]) and key `$2` until the transaction ends, in one order (no deadlock). */
export const lockOrderedPairs = (): string =>
  `SELECT pg_advisory_xact_lock(l.k) FROM (SELECT DISTINCT ${pairLock('e', '$2')} AS k FROM unnest($1::text[]) e ORDER BY 1) l`

/**
 * Message `$4` (key `$2`, number `$3`) to each of endpoints `$1` (text[]), under their pairs' locks: the head of a
 * pair with nothing before it, else waiting. A repeated fan-out adds nothing; an endpoint deleted meanwhile is skipped.
 */
export const enqueueOrdered = (schema: string): string => {
  const table = qualify(schema, 'ordered_deliveries')
  return `INSERT INTO ${table} (endpoint_id, ordering_key, seq, message_id, state)
    SELECT e.id, $2, $3, $4, CASE WHEN EXISTS (SELECT 1 FROM ${table} w WHERE w.endpoint_id = e.id AND w.ordering_key = $2 AND w.seq < $3)
      THEN 'waiting' ELSE 'ready' END
    FROM ${qualify(schema, 'endpoints')} e WHERE e.id = ANY ($1::text[])
    ON CONFLICT DO NOTHING`
}

/** Up to `$1` heads whose job is still to be added, first published first, with their message (nulls: it is gone). */
export const readyOrdered = (schema: string): string =>
  `SELECT w.endpoint_id, w.ordering_key, w.message_id, o.id, o.public_type, o.tenant, o.data, o.created_at, o.traceparent, o.tracestate
   FROM ${qualify(schema, 'ordered_deliveries')} w LEFT JOIN ${qualify(schema, 'outbox')} o ON o.id = w.message_id
   WHERE w.state = 'ready' ORDER BY w.seq LIMIT $1`

/** The head of message `$1` to endpoint `$2` (key `$3`) has its job. */
export const markOrderedQueued = (schema: string): string =>
  `UPDATE ${qualify(schema, 'ordered_deliveries')} SET state = 'queued'
   WHERE message_id = $1 AND endpoint_id = $2 AND ordering_key = $3 AND state = 'ready'`

/** The lock of the one pair of endpoint `$1` and key `$2`. */
export const lockOrderedPair = (): string => `SELECT pg_advisory_xact_lock(${pairLock('$1', '$2')})`

/**
 * Message `$1`'s delivery to endpoint `$2` (key `$3`) is final: its row goes, and when it was the pair's head the
 * next one is made ready, with a NOTIFY on `$4` (sent on commit) that wakes a dispatcher to add its job. Run under
 * the pair's lock. The statement's one snapshot still shows the deleted row: the next is the lowest of the others.
 */
export const releaseOrdered = (schema: string): string => {
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
