/**
 * A keyed delivery job is its key's head at its endpoint (src/outbox/ordering.ts): it runs as any job, and once its
 * outcome is final (a success, or given up: no attempt left, or unrecoverable) the key's next message to that endpoint
 * is let go. Always after the outcome is logged: a worker killed in between leaves the job to be run again, and that run
 * settles what the last one logged (delivered, or its outcome) without sending again, then lets the next go. A release
 * PostgreSQL cannot take hands the job back to the queue as delayed, marked `releasing`: its later runs only release,
 * as often as it takes, then end the job as its outcome did. Never given up; the next message waits until then.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { DelayedError, UnrecoverableError, type Job } from 'bullmq'
import { databaseErrorKind } from '../db/database-errors.js'
import type { OutboundJobData, ReleasingOutcome } from './delivery-job.js'
import { runAttempt, type DeliverDeps } from './run-attempt.js'

/** A release PostgreSQL failed to break a conflict is run again at once, this many times in all, before it waits. */
const CONFLICT_TRIES = 3
/** How long a job waits, delayed in the queue, before its release is tried again (a test shortens it). */
export const releaseTiming = { retryMs: 1000 }
/** A job failed by BullMQ without a run (stalled out) has no run to hand back: its release is tried this often in process. */
const FAILED_JOB_RELEASE_TRIES = 30

/** True when this error ends the job: BullMQ will not run it again. */
export function endsJob (job: Job<OutboundJobData>, err: unknown): boolean {
  if (err instanceof DelayedError) return false
  return err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
}

export async function runInOrder (job: Job<OutboundJobData>, token: string | undefined, deps: DeliverDeps): Promise<void> {
  if (job.data.orderingKey === undefined || deps.store.releaseOrdered === undefined) return await runAttempt(job, token, deps)
  const left = job.data.releasing
  if (left !== undefined) {
    // An earlier run logged the final outcome and could not release: nothing is sent again.
    await releaseNext(job, token, deps, left)
    if (left.error === undefined) return
    throw left.unrecoverable === true ? new UnrecoverableError(left.error) : new Error(left.error)
  }
  try {
    await runAttempt(job, token, deps)
  } catch (err) {
    if (endsJob(job, err)) await releaseNext(job, token, deps, { error: (err as Error).message, unrecoverable: err instanceof UnrecoverableError })
    throw err
  }
  await releaseNext(job, token, deps, {})
}

/**
 * Lets the key's next message go once its head's outcome is final and logged. When PostgreSQL cannot take it (out
 * of reach, a conflict that keeps coming, anything), the job is put back as delayed with its outcome in its data,
 * holding no worker slot, and throws DelayedError; BullMQ runs it again after `releaseTiming.retryMs`. A release is
 * idempotent (its row gone, it changes nothing), so a run killed after it committed releases nothing more.
 */
export async function releaseNext (job: Job<OutboundJobData>, token: string | undefined, deps: DeliverDeps, outcome: ReleasingOutcome): Promise<void> {
  const { messageId, endpointId, orderingKey } = job.data
  if (orderingKey === undefined || deps.store.releaseOrdered === undefined) return
  let failure: unknown
  for (let tries = 1; tries <= CONFLICT_TRIES; tries++) {
    try {
      await deps.store.releaseOrdered(messageId, endpointId, orderingKey)
      return
    } catch (err) {
      failure = err
      if (databaseErrorKind(err) !== 'conflict') break
    }
  }
  const kind = databaseErrorKind(failure)
  deps.log[kind === 'unavailable' || kind === 'conflict' ? 'warn' : 'error'](
    { jobId: job.id, endpointId, err: (failure as Error).message, retryInMs: releaseTiming.retryMs },
    'anvil delivery: the key\'s next message could not be let go yet; the job waits to try again')
  // Marked first: a worker killed before the move leaves a job whose next run, after its stall, only releases.
  if (job.data.releasing === undefined) await job.updateData({ ...job.data, releasing: outcome })
  await job.moveToDelayed(Date.now() + releaseTiming.retryMs, token)
  throw new DelayedError()
}

/** The release of a job BullMQ failed for its stalls alone, after they are logged; tried in process, then logged as lost. */
export async function releaseFailedJob (job: Job<OutboundJobData>, deps: DeliverDeps): Promise<void> {
  const { messageId, endpointId, orderingKey } = job.data
  if (orderingKey === undefined || deps.store.releaseOrdered === undefined) return
  for (let tries = 1; ; tries++) {
    try {
      await deps.store.releaseOrdered(messageId, endpointId, orderingKey)
      return
    } catch (err) {
      const kind = databaseErrorKind(err)
      if ((kind !== 'unavailable' && kind !== 'conflict') || tries >= FAILED_JOB_RELEASE_TRIES) {
        deps.log.error({ jobId: job.id, endpointId, err: (err as Error).message }, 'anvil delivery: the key\'s next message could not be let go')
        throw err
      }
      await sleep(releaseTiming.retryMs)
    }
  }
}
