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

/** Logged on a job whose handler gave up in a way its kept stack does not show (see `noteUnrecoverable`). */
export const UNRECOVERABLE_NOTE = 'anvil: unrecoverable'

function isUnrecoverable (err: Error): boolean {
  // BullMQ's own test for it (an UnrecoverableError, a subclass, or an error so named).
  return err instanceof UnrecoverableError || err.name === 'UnrecoverableError'
}

/**
 * Notes on the job that its handler gave up where the stack BullMQ keeps would not say so (a subclass of
 * UnrecoverableError heads it with its own name), for a sweep that finds the job failed on its last attempt.
 */
export async function noteUnrecoverable (job: Job, err: unknown): Promise<void> {
  if (!(err instanceof Error) || !isUnrecoverable(err) || err.stack?.startsWith('UnrecoverableError') === true) return
  await job.log(UNRECOVERABLE_NOTE).catch(() => {})
}

/**
 * Why the job failed for good. The listener has the error; the sweep has the job (an UnrecoverableError on
 * the last attempt starts the stack BullMQ keeps) and the job's log (`noteUnrecoverable`).
 */
function reasonOf (job: Job, err: Error | undefined, notes: readonly string[]): FailureReason {
  if (job.failedReason === STALLED_MESSAGE) return 'stalled'
  if (err !== undefined) return isUnrecoverable(err) ? 'unrecoverable' : 'exhausted'
  // A job that failed before its attempts ran out was stopped by an UnrecoverableError.
  if (job.attemptsMade < (job.opts.attempts ?? 1)) return 'unrecoverable'
  const gaveUp = job.stacktrace?.at(-1)?.startsWith('UnrecoverableError') === true || notes.includes(UNRECOVERABLE_NOTE)
  return gaveUp ? 'unrecoverable' : 'exhausted'
}

export function failureContextOf (job: Job, err?: Error, notes: readonly string[] = []): FailureContext {
  return {
    attempts: job.attemptsMade,
    lastError: job.failedReason ?? 'unknown',
    failedAt: job.finishedOn ?? Date.now(),
    reason: reasonOf(job, err, notes)
  }
}

/**
 * Copies a finally-failed job into the dead-letter queue, once: the letter's id derives from the job's, so the
 * listener and the sweep (which has no error, only `notes`, the job's log) may both call it. The failed job
 * stays: removing it would drop its dedupe key and let a redelivery in.
 */
export async function deadLetter (
  dead: Queue<DeadLetterData>, job: Job<WebhookJobData>, err?: Error, notes?: () => Promise<readonly string[]>, report?: ReportDeadLetter
): Promise<DeadLettered> {
  const id = deadLetterId(job.id as string)
  // Whether this call wrote it, so the dead letter is counted (and logged) once, by whoever wrote it. The
  // listener and a sweep within the same few milliseconds could both see it missing: counted twice, not lost.
  if (await dead.getJob(id) !== undefined) return { id, created: false }
  const failureContext = failureContextOf(job, err, await notes?.() ?? [])
  const letter: DeadLetterData = { v: 1, originalJobId: job.id as string, job: job.data, failureContext }
  // Before the letter: a failure here leaves the job for the sweep, which reports (idempotently) and letters it.
  await report?.(id, letter)
  await dead.add('dead', letter, { jobId: id })
  return { id, created: true }
}

/** Called with each new dead letter before it is added (the `inbound.dead_lettered` event); must be idempotent. */
export type ReportDeadLetter = (letterId: string, letter: DeadLetterData) => Promise<void>

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
  onDeadLettered: (job: Job<WebhookJobData>, id: string) => void = () => {}, report?: ReportDeadLetter
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
      const { id: letterId, created } = await deadLetter(dead, job, undefined, async () => (await main.getJobLogs(id)).logs, report)
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
