/**
 * The journal's PostgreSQL-native queue (migration 0016, `journal: { queue: 'postgres' }`): a row per job in
 * flight. The ingress inserts it (ON CONFLICT DO NOTHING on the idempotency key), workers claim due rows with
 * FOR UPDATE SKIP LOCKED under a lease, and delete a row once its event's journal row holds the outcome.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Opaque } from '../shared/schemas.js'
import { qualify } from '../db/qualify.js'

/** A row of `webhook_event_queue` as pg reads it. */
export const QueueRowSchema = Type.Object({
  job_id: Type.String(),
  dedupe_key: Type.String(),
  event_id: Type.String(),
  received_at: Type.Date(),
  source: Type.String(),
  provider: Nullable(Type.String()),
  event_type: Nullable(Type.String()),
  provider_event_id: Nullable(Type.String()),
  content_type: Nullable(Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  signature: Nullable(Type.String()),
  request_id: Nullable(Type.String()),
  retry_schedule: Type.Array(Type.Integer()),
  replay_of: Nullable(Type.String()),
  payload: Opaque<Buffer>(),
  run_at: Type.Date(),
  locked_until: Nullable(Type.Date()),
  attempts_made: Type.Integer(),
  attempts_started: Type.Integer()
})
export type QueueRow = Static<typeof QueueRowSchema>

/** The NOTIFY channel of a schema's queue (a channel is an identifier: the schema's name is one). */
export const channelOf = (schema: string): string => `anvil_queue_${schema}`

/** The columns an enqueue writes, in the order of its values. */
export const ENQUEUED = ['job_id', 'dedupe_key', 'event_id', 'received_at', 'source', 'provider', 'event_type', 'provider_event_id',
  'content_type', 'headers', 'signature', 'request_id', 'retry_schedule', 'replay_of', 'payload'] as const
const TYPES = ['text', 'text', 'text', 'timestamptz', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'bytea']
const CASTS: Record<string, string> = { headers: 'jsonb', retry_schedule: 'int[]' }
const NAMES = ENQUEUED.join(', ')
const SELECTED = ENQUEUED.map((name) => CASTS[name] === undefined ? `v.${name}` : `v.${name}::${CASTS[name]}`).join(', ')

/**
 * Enqueues events, `$1`…`$15` arrays of one value an event (ENQUEUED's order), `$16` the dedupe window in ms:
 * an event whose key is queued already, or whose journal row of the same key was received within the window,
 * makes no row. The rows added come back (`job_id`, `dedupe_key`) and wake the workers; the others' keys are
 * looked up with `pendingJobs`.
 */
export const enqueue = (schema: string): string => {
  const queue = qualify(schema, 'webhook_event_queue')
  return `WITH v AS (SELECT * FROM unnest(${TYPES.map((type, i) => `$${i + 1}::${type}[]`).join(', ')}) AS v(${NAMES})),
    added AS (INSERT INTO ${queue} (${NAMES})
      SELECT ${SELECTED} FROM v WHERE NOT EXISTS (SELECT 1 FROM ${qualify(schema, 'webhook_events')} e
        WHERE e.id = v.event_id AND e.dedupe_key = v.dedupe_key AND e.received_at >= v.received_at - make_interval(secs => $16::float8 / 1000))
      ON CONFLICT (dedupe_key) DO NOTHING RETURNING job_id, dedupe_key)
    SELECT a.job_id, a.dedupe_key FROM added a, pg_notify('${channelOf(schema)}', '') AS n`
}

/**
 * The jobs that hold keys `$2` (an array) of events `$1`: the queued job, else the latest journal row's job
 * within the window `$3` ms (each key's `received_at` `$4`).
 */
export const pendingJobs = (schema: string): string =>
  `SELECT k.key AS dedupe_key, coalesce(
      (SELECT q.job_id FROM ${qualify(schema, 'webhook_event_queue')} q WHERE q.dedupe_key = k.key),
      (SELECT e.job_id FROM ${qualify(schema, 'webhook_events')} e WHERE e.id = k.event_id AND e.dedupe_key = k.key
        AND e.received_at >= k.received_at - make_interval(secs => $3::float8 / 1000) ORDER BY e.received_at DESC LIMIT 1)) AS job_id
    FROM unnest($1::text[], $2::text[], $4::timestamptz[]) AS k(event_id, key, received_at)`

/**
 * Claims up to `$1` due rows, each leased for `$2` ms: another worker takes a row back only once its lease has
 * passed (its worker died). Each claim counts an attempt begun.
 */
export const claim = (schema: string): string => {
  const queue = qualify(schema, 'webhook_event_queue')
  return `UPDATE ${queue} q SET attempts_started = q.attempts_started + 1, locked_until = now() + make_interval(secs => $2::float8 / 1000)
    FROM (SELECT job_id FROM ${queue} WHERE run_at <= now() AND (locked_until IS NULL OR locked_until < now())
      ORDER BY run_at LIMIT $1 FOR UPDATE SKIP LOCKED) c
    WHERE q.job_id = c.job_id
    RETURNING q.*`
}

/**
 * Renews the leases of the jobs `$1` (running here) for `$2` ms. A row locked is skipped, not waited for: its
 * outcome's transaction is deleting it (a group's holds its rows until it commits), and waiting on it while
 * holding the others' would deadlock with that transaction.
 */
export const renew = (schema: string): string => {
  const queue = qualify(schema, 'webhook_event_queue')
  return `UPDATE ${queue} SET locked_until = now() + make_interval(secs => $2::float8 / 1000)
    WHERE job_id IN (SELECT job_id FROM ${queue} WHERE job_id = ANY ($1::text[]) AND locked_until IS NOT NULL FOR UPDATE SKIP LOCKED)`
}

/** Job `$1`'s attempt `$2` failed: the next may start in `$3` ms. */
export const retryLater = (schema: string): string =>
  `UPDATE ${qualify(schema, 'webhook_event_queue')} SET attempts_made = $2, run_at = now() + make_interval(secs => $3::float8 / 1000), locked_until = NULL
    WHERE job_id = $1`

/** Jobs `$1` are over (done, dead, or overtaken by a replay): their rows go. */
export const remove = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'webhook_event_queue')} WHERE job_id = ANY ($1::text[])`

/** Gives back the leases of jobs `$1` that never began (a worker closing). */
export const release = (schema: string): string =>
  `UPDATE ${qualify(schema, 'webhook_event_queue')} SET locked_until = NULL, attempts_started = attempts_started - 1
    WHERE job_id = ANY ($1::text[])`

/**
 * A journal replay's jobs, `$1`…`$15` as `enqueue`'s: a row queued under the same key (a retry waiting) is taken
 * over by the replay's job, from its first attempt.
 */
export const replace = (schema: string): string => {
  const queue = qualify(schema, 'webhook_event_queue')
  const assigned = ENQUEUED.filter((name) => name !== 'dedupe_key').map((name) => `${name} = EXCLUDED.${name}`).join(', ')
  return `WITH v AS (SELECT * FROM unnest(${TYPES.map((type, i) => `$${i + 1}::${type}[]`).join(', ')}) AS v(${NAMES})),
    added AS (INSERT INTO ${queue} (${NAMES}) SELECT ${SELECTED} FROM v
      ON CONFLICT (dedupe_key) DO UPDATE SET ${assigned}, run_at = now(), locked_until = NULL, attempts_made = 0, attempts_started = 0
      RETURNING job_id)
    SELECT a.job_id FROM added a, pg_notify('${channelOf(schema)}', '') AS n`
}

/** How many jobs are queued, and how many of them are due now. */
export const depth = (schema: string): string =>
  `SELECT count(*)::int AS queued, (count(*) FILTER (WHERE run_at <= now()))::int AS due FROM ${qualify(schema, 'webhook_event_queue')}`

/** Whether the queue's database answers (the ingress's health). */
export const reachable = (schema: string): string => `SELECT 1 FROM ${qualify(schema, 'webhook_event_queue')} LIMIT 0`
