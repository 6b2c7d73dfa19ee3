/**
 * Replay from the journal: an event's row goes back to `received` with 0 attempts and a new replay
 * generation, and its job (id from the id and the generation) is added in the same transaction. The status
 * check is the claim: of concurrent replays of one event, one moves it and adds a job; the others find it
 * `received` and add nothing. An event that is `received` or `processing` is already on its way.
 */
import type pg from 'pg'
import { Job, type Queue } from 'bullmq'
import { inTransaction, type Database } from '../db/database.js'
import { DEAD_JOB_PREFIX, JOB_NAME, REPLAY_JOB_PREFIX } from '../shared/constants.js'
import type { DeadLetterData } from '../worker/dead-letter.js'
import type { RedisClient } from '../redis/connect.js'
import { labelsOf, publish } from '../shared/diagnostics.js'
import { errors } from '../shared/errors.js'
import type { WebhookJobData } from '../queue/job-data.js'
import { DEFAULT_QUEUE_SETTINGS, jobOptions, type Retention } from '../queue/queue-settings.js'
import type { ResolvedFilter } from './event-filter.js'
import * as webhookEvents from '../sql/webhook-events.js'
import type { ReplayedRow } from '../sql/webhook-events.js'
import * as webhookEventQueue from '../sql/webhook-event-queue.js'
import { queuedValues, type QueuedValues } from '../queue/pg-event-queue.js'
import { headersJson } from '../db/headers-json.js'

export interface ReplayTarget {
  db: Database
  /** BullMQ's queue, or `'postgres'`: the journal's own queue (`journal: { queue: 'postgres' }`), written in the replay's transaction. */
  queue: Queue<WebhookJobData> | 'postgres'
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


const orUndefined = <T>(value: T | null): T | undefined => value ?? undefined

/** The job the ingress made, rebuilt from the row: the same key, bytes, headers and schedule. */
function jobDataOf (row: ReplayedRow): WebhookJobData {
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

/** The job's id is the dead letter's replay id: the event was dead (src/sql/webhook-events.ts, `replay`). */
const replaysDeadLetter = (row: ReplayedRow): boolean => row.job_id.startsWith(REPLAY_JOB_PREFIX + DEAD_JOB_PREFIX)

/** The replayed rows as the journal queue's rows; of two deliveries of one key, the latest (one row a key). */
function queuedRows (rows: ReplayedRow[]): QueuedValues[] {
  const byKey = new Map<string, ReplayedRow>()
  for (const row of rows) if ((byKey.get(row.dedupe_key)?.received_at ?? -Infinity) < row.received_at) byKey.set(row.dedupe_key, row)
  return [...byKey.values()].map((row) => ({
    job_id: row.job_id, dedupe_key: row.dedupe_key, event_id: row.id, received_at: row.received_at, source: row.source,
    provider: row.provider, event_type: row.event_type, provider_event_id: jobDataOf(row).eventId ?? null,
    content_type: row.content_type, headers: headersJson(row.headers), signature: row.signature, request_id: row.request_id,
    retry_schedule: row.retry_schedule, replay_of: replaysDeadLetter(row) ? DEAD_JOB_PREFIX + (row.old_job_id as string) : null, payload: row.payload
  }))
}

async function addJobs (target: ReplayTarget, rows: ReplayedRow[], client: pg.PoolClient): Promise<void> {
  if (rows.length === 0) return
  if (target.queue === 'postgres') {
    await client.query(webhookEventQueue.replace(target.db.schema), queuedValues(queuedRows(rows)))
    for (const row of rows) publish('replayed', () => ({ ...labelsOf(jobDataOf(row)), deadLetterId: `journal:${row.id}`, jobId: row.job_id }))
    return
  }
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
  const { schema } = target.db
  const result = await inTransaction(target.db.pool, async (client) => {
    const { rows } = await client.query<ReplayedRow>(webhookEvents.replay(schema), [id])
    const row = rows[0]
    if (row === undefined) {
      const found = await client.query<{ job_id: string | null }>(webhookEvents.jobOf(schema), [id])
      if (found.rows[0] === undefined) throw new errors.EVENT_NOT_FOUND(id)
      return { id, jobId: found.rows[0].job_id, replayed: false, rows }
    }
    await addJobs(target, rows, client)
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
async function markDeadLetters (target: ReplayTarget, rows: ReplayedRow[]): Promise<void> {
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
  const { text, values } = webhookEvents.replayPage(target.db.schema, filter, [cursor?.receivedAt ?? '-infinity', cursor?.id ?? ''], limit)
  const stop = new Error('replay stopped')
  return await inTransaction(target.db.pool, async (client) => {
    const { rows } = await client.query<ReplayedRow>(text, values)
    const last = rows.at(-1)
    const next = last === undefined ? cursor : { receivedAt: last.received_at_text, id: last.id }
    // Stopped: thrown, so the rows moved above are rolled back with the rest.
    if (within !== undefined && !await within(client, rows.length, next)) throw stop
    await addJobs(target, rows, client)
    return { rows, cursor: next }
  }).then(async ({ rows, cursor: next }) => {
    await markDeadLetters(target, rows)
    return { replayed: rows.length, cursor: next, stopped: false }
  }, (err: unknown) => {
    if (err === stop) return { replayed: 0, cursor, stopped: true }
    throw err
  })
}
