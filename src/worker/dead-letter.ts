import { Job, UnrecoverableError, type Queue } from 'bullmq'
import type { RedisClient } from '../redis/connect.js'
import { DEAD_JOB_PREFIX, STALLED_MESSAGE, SWEEP_OVERLAP_MS } from '../shared/constants.js'
import type { WebhookJobData } from '../queue/job-data.js'

export function deadLetterId (jobId: string): string {
  return DEAD_JOB_PREFIX + jobId
}

export type FailureReason = 'exhausted' | 'unrecoverable' | 'stalled'

export interface FailureContext {
  attempts: number
  lastError: string
  /** Epoch ms of the final failure. */
  failedAt: number
  reason: FailureReason
}

export interface DeadLetterData {
  v: 1
  originalJobId: string
  job: WebhookJobData
  failureContext: FailureContext
  /** Set once replayed: the live job it became. */
  replayedAs?: string
  replayedAt?: number
}

function isUnrecoverable (err: Error): boolean {
  // BullMQ's own test for it (an UnrecoverableError, a subclass, or an error so named).
  return err instanceof UnrecoverableError || err.name === 'UnrecoverableError'
}

/**
 * Why the job failed for good. The listener has the error; the sweep has only the job, where an
 * UnrecoverableError on the last attempt shows in the stack BullMQ keeps (the name starts its first line).
 */
function reasonOf (job: Job, failedReason: string, err?: Error): FailureReason {
  if (failedReason === STALLED_MESSAGE) return 'stalled'
  if (err !== undefined) return isUnrecoverable(err) ? 'unrecoverable' : 'exhausted'
  // A job that failed before its attempts ran out was stopped by an UnrecoverableError.
  if (job.attemptsMade < (job.opts.attempts ?? 1)) return 'unrecoverable'
  return job.stacktrace?.at(-1)?.startsWith('UnrecoverableError') === true ? 'unrecoverable' : 'exhausted'
}

export function failureContextOf (job: Job, err?: Error): FailureContext {
  const lastError = job.failedReason ?? 'unknown'
  return {
    attempts: job.attemptsMade,
    lastError,
    failedAt: job.finishedOn ?? Date.now(),
    reason: reasonOf(job, lastError, err)
  }
}

/**
 * Copies a finally-failed job into the dead-letter queue. Idempotent: the dead letter's id derives from
 * the job's, and BullMQ keeps the first add, so the `failed` listener and the sweep may both call it.
 * The failed job stays where it is: removing it would drop its dedupe key and let a redelivery in.
 */
export async function deadLetter (dead: Queue<DeadLetterData>, job: Job<WebhookJobData>, err?: Error): Promise<DeadLettered> {
  const id = deadLetterId(job.id as string)
  const data: DeadLetterData = { v: 1, originalJobId: job.id as string, job: job.data, failureContext: failureContextOf(job, err) }
  // Whether this call wrote it, so the dead letter is counted (and logged) once, by whoever wrote it. The
  // listener and a sweep within the same few milliseconds could both see it missing: counted twice, not lost.
  const existed = await dead.getJob(id) !== undefined
  await dead.add('dead', data, { jobId: id })
  return { id, created: !existed }
}

export interface DeadLettered {
  id: string
  /** False when the dead letter was already there (the listener and the sweep both came). */
  created: boolean
}

const SWEEP_PAGE = 500

/**
 * Dead-letters every job that failed since the last sweep, so a crash between a job's final failure and
 * its `failed` listener loses nothing. Progress is a watermark in Redis, so each sweep reads only what is
 * new (plus an overlap for clock skew between workers). Returns how many jobs it looked at.
 */
export async function sweepFailed (
  main: Queue<WebhookJobData>, dead: Queue<DeadLetterData>, client: RedisClient,
  onDeadLettered: (job: Job<WebhookJobData>, id: string) => void = () => {}
): Promise<number> {
  const watermarkKey = main.toKey('anvil-swept')
  const stored = Number(await client.get(watermarkKey) ?? 0)
  let from = Math.max(0, stored - SWEEP_OVERLAP_MS)
  let seen = 0
  for (;;) {
    const page = await client.zrangebyscore(main.toKey('failed'), from, '+inf', 'WITHSCORES', 'LIMIT', 0, SWEEP_PAGE)
    const ids: string[] = []
    let last = from
    for (let i = 0; i < page.length; i += 2) {
      ids.push(page[i] as string)
      last = Number(page[i + 1])
    }
    for (const id of ids) {
      const job = await Job.fromId<WebhookJobData>(main, id)
      if (job === undefined) continue
      const { id: letterId, created } = await deadLetter(dead, job)
      if (created) onDeadLettered(job, letterId)
    }
    seen += ids.length
    if (ids.length > 0 && last > stored) await client.set(watermarkKey, String(last))
    // A page of one timestamp cannot advance `from`; stop rather than loop on it.
    if (ids.length < SWEEP_PAGE || last === from) break
    from = last
  }
  return seen
}

const PRUNE_PAGE = 1000

/**
 * Removes dead letters older than the retention; 0 keeps them. Runs on every sweep, in pages until none is
 * left, so a burst of failures cannot outpace it. Returns how many it removed.
 */
export async function pruneDeadLetters (dead: Queue<DeadLetterData>, ageSeconds: number): Promise<number> {
  if (ageSeconds <= 0) return 0
  let removed = 0
  for (;;) {
    const page = await dead.clean(ageSeconds * 1000, PRUNE_PAGE, 'wait')
    removed += page.length
    if (page.length < PRUNE_PAGE) return removed
  }
}
