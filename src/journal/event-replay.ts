/**
 * Replay from the journal: an event's row goes back to `received` with 0 attempts and a new replay
 * generation, and its job (id from the id and the generation) is added in the same transaction. The status
 * check is the claim: of concurrent replays of one event, one moves it and adds a job; the others find it
 * `received` and add nothing. An event that is `received` or `processing` is already on its way.
 */
import type pg from 'pg'
import { Job, type Queue } from 'bullmq'
import { inTransaction, type Database } from '../db/database.js'
import { DEAD_JOB_PREFIX, JOB_NAME, JOURNAL_REPLAY_JOB_PREFIX, REPLAY_JOB_PREFIX } from '../shared/constants.js'
import type { DeadLetterData } from '../worker/dead-letter.js'
import type { RedisClient } from '../redis/connect.js'
import { labelsOf, publish } from '../shared/diagnostics.js'
import { errors } from '../shared/errors.js'
import type { WebhookJobData } from '../queue/job-data.js'
import { DEFAULT_QUEUE_SETTINGS, jobOptions, type Retention } from '../queue/queue-settings.js'
import { filterSql, type ResolvedFilter } from './event-filter.js'
import { REPLAYABLE } from '../sql/webhook_events.js'

export interface ReplayTarget {
  db: Database
  queue: Queue<WebhookJobData>
  retention: Retention
  /** The dead letters: an event replayed from the journal has its dead letter marked replayed, as a dead-letter replay does. */
  dead?: { queue: Queue<DeadLetterData>, client: RedisClient }
}

export interface EventReplayResult {
  id: string
  /** The job the event is (now, or already) on. */
  jobId: string | null
  /** False when the event was already `received` or `processing`: no job was added. */
  replayed: boolean
}


interface ReplayRow {
  id: string
  source: string
  provider: string | null
  event_type: string | null
  dedupe_key: string
  payload: Buffer
  content_type: string | null
  headers: Record<string, string>
  signature: string | null
  request_id: string | null
  received_at: Date
  received_at_text: string
  retry_schedule: number[]
  job_id: string
  /** What the row was before the replay: a `dead` one has a dead letter `d_<old_job_id>` in Redis. */
  old_job_id: string | null
  old_status: string
}

/**
 * A dead event goes onto the job a replay of its dead letter makes (`r_d_<job>`, under the same dedupe key,
 * src/worker/replay.ts): a journal replay and a dead-letter replay of it, in either order or at once, make one
 * job. Any other event goes onto a job of its replay generation.
 */
const RESET = `status = 'received', attempts = 0, processed_at = NULL, updated_at = now(),
  replay_generation = e.replay_generation + 1,
  job_id = CASE WHEN o.old_status = 'dead' AND o.old_job_id IS NOT NULL THEN '${REPLAY_JOB_PREFIX}${DEAD_JOB_PREFIX}' || o.old_job_id
    ELSE '${JOURNAL_REPLAY_JOB_PREFIX}' || (e.replay_generation + 1) || '_' || md5(e.id) END`
const RETURNING = `RETURNING e.id, e.source, e.provider, e.event_type, e.dedupe_key, e.payload, e.content_type, e.headers,
  e.signature, e.request_id, e.received_at, e.received_at::text AS received_at_text, e.retry_schedule, e.job_id,
  o.old_job_id, o.old_status`

const orUndefined = <T>(value: T | null): T | undefined => value ?? undefined

/** The job the ingress made, rebuilt from the row: the same key, bytes, headers and schedule. */
function jobDataOf (row: ReplayRow): WebhookJobData {
  return {
    v: 1,
    source: row.source,
    key: row.dedupe_key,
    payload: row.payload.toString('base64'),
    contentType: orUndefined(row.content_type),
    signature: orUndefined(row.signature),
    // The journal's id is the event id when there was one, else the key.
    eventId: row.id === row.dedupe_key ? undefined : row.id,
    eventType: orUndefined(row.event_type),
    provider: orUndefined(row.provider),
    headers: row.headers,
    receivedAt: row.received_at.getTime(),
    retry: row.retry_schedule,
    requestId: orUndefined(row.request_id)
  }
}

/** How long the mark of a replayed dead letter lives when dead letters are kept for ever: a year (as replay.ts). */
const MARK_SECONDS = 365 * 24 * 60 * 60

const markTtlMs = (retention: Retention): number => 1000 * (retention.deadAgeSeconds > 0 ? retention.deadAgeSeconds : MARK_SECONDS)

/** The job's id is the dead letter's replay id: the event was dead (see RESET). */
const replaysDeadLetter = (row: ReplayRow): boolean => row.job_id.startsWith(REPLAY_JOB_PREFIX + DEAD_JOB_PREFIX)

async function addJobs (target: ReplayTarget, rows: ReplayRow[]): Promise<void> {
  if (rows.length === 0) return
  const ttl = markTtlMs(target.retention)
  await target.queue.addBulk(rows.map((row) => {
    const data = jobDataOf(row)
    const opts = jobOptions({ ...DEFAULT_QUEUE_SETTINGS, retrySchedule: data.retry, retention: target.retention })
    if (!replaysDeadLetter(row)) return { name: JOB_NAME, data, opts: { ...opts, jobId: row.job_id } }
    // As a dead-letter replay adds it: if one already did (its job not yet run), this add is that job.
    const replayOf = DEAD_JOB_PREFIX + (row.old_job_id as string)
    return { name: JOB_NAME, data: { ...data, replayOf }, opts: { ...opts, jobId: row.job_id, deduplication: { id: row.job_id, ttl } } }
  }))
  for (const row of rows) publish('replayed', () => ({ ...labelsOf(jobDataOf(row)), deadLetterId: `journal:${row.id}`, jobId: row.job_id }))
}

export async function replayEvent (target: ReplayTarget, id: string): Promise<EventReplayResult> {
  const events = target.db.table('webhook_events')
  const result = await inTransaction(target.db.pool, async (client) => {
    const { rows } = await client.query<ReplayRow>(`UPDATE ${events} e SET ${RESET}
      FROM (SELECT id, job_id AS old_job_id, status AS old_status FROM ${events} WHERE id = $1 FOR UPDATE) o
      WHERE e.id = o.id AND ${REPLAYABLE} ${RETURNING}`, [id])
    const row = rows[0]
    if (row === undefined) {
      const found = await client.query<{ job_id: string | null }>(`SELECT job_id FROM ${events} WHERE id = $1`, [id])
      if (found.rows[0] === undefined) throw new errors.EVENT_NOT_FOUND(id)
      return { id, jobId: found.rows[0].job_id, replayed: false, rows }
    }
    await addJobs(target, rows)
    return { id, jobId: row.job_id, replayed: true, rows }
  })
  await markDeadLetters(target, result.rows)
  return { id: result.id, jobId: result.jobId, replayed: result.replayed }
}

/**
 * Marks the dead letters of the events just replayed (`replayedAs`, and the claim key a dead-letter replay sets),
 * so that a later dead-letter replay does not run them a second time. After the commit, and best effort: a
 * crash in between leaves a letter unmarked, as a crash would in a dead-letter replay.
 */
async function markDeadLetters (target: ReplayTarget, rows: ReplayRow[]): Promise<void> {
  if (target.dead === undefined) return
  const { queue: dead, client } = target.dead
  const ttlMs = markTtlMs(target.retention)
  for (const row of rows) {
    if (row.old_status !== 'dead' || row.old_job_id === null) continue
    const letterId = DEAD_JOB_PREFIX + row.old_job_id
    const letter = await Job.fromId<DeadLetterData>(dead, letterId).catch(() => undefined)
    if (letter === undefined || letter.data.replayedAs !== undefined) continue
    await client.set(dead.toKey(`replayed:${letterId}`), row.job_id, 'PX', ttlMs, 'NX').catch(() => {})
    await letter.updateData({ ...letter.data, replayedAs: row.job_id, replayedAt: Date.now() }).catch(() => {})
  }
}

/** Where a bulk replay is: the last (received_at, id) it took, oldest first. */
export interface ReplayCursor { receivedAt: string, id: string }

/**
 * Replays up to `limit` events matching the filter after the cursor, oldest first, in one transaction (with
 * `within`, for the run's own bookkeeping). Rows another replay holds are skipped.
 */
export async function replayPage (
  target: ReplayTarget, filter: ResolvedFilter, cursor: ReplayCursor | undefined, limit: number,
  within?: (client: pg.PoolClient, replayed: number, cursor: ReplayCursor | undefined) => Promise<boolean>
): Promise<{ replayed: number, cursor: ReplayCursor | undefined, stopped: boolean }> {
  const events = target.db.table('webhook_events')
  const { where, values } = filterSql(filter, 4)
  const stop = new Error('replay stopped')
  return await inTransaction(target.db.pool, async (client) => {
    // RETURNING keeps no order: the outer SELECT sorts, so the last row is the cursor. Ids compare bytewise
    // (COLLATE "C") so that the cursor's order never depends on the database's collation.
    const { rows } = await client.query<ReplayRow>(`WITH picked AS (
        SELECT e.id, e.job_id AS old_job_id, e.status AS old_status FROM ${events} e WHERE ${where} AND ${REPLAYABLE}
          AND (e.received_at, e.id COLLATE "C") > ($1::timestamptz, $2::text COLLATE "C")
        ORDER BY e.received_at, e.id COLLATE "C" LIMIT $3 FOR UPDATE SKIP LOCKED),
      moved AS (UPDATE ${events} e SET ${RESET} FROM picked o WHERE e.id = o.id ${RETURNING})
      SELECT * FROM moved ORDER BY received_at, id COLLATE "C"`,
    [cursor?.receivedAt ?? '-infinity', cursor?.id ?? '', limit, ...values])
    const last = rows.at(-1)
    const next = last === undefined ? cursor : { receivedAt: last.received_at_text, id: last.id }
    // Stopped: thrown, so the rows moved above are rolled back with the rest.
    if (within !== undefined && !await within(client, rows.length, next)) throw stop
    await addJobs(target, rows)
    return { rows, cursor: next }
  }).then(async ({ rows, cursor: next }) => {
    await markDeadLetters(target, rows)
    return { replayed: rows.length, cursor: next, stopped: false }
  }, (err: unknown) => {
    if (err === stop) return { replayed: 0, cursor, stopped: true }
    throw err
  })
}
