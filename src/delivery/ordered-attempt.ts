/**
 * A keyed delivery job is its key's head at its endpoint (src/outbox/ordering.ts): it runs as any job, and once its
 * outcome is final (a success, or given up: no attempt left, or unrecoverable) the key's next message to that endpoint
 * is let go. Always after the outcome is logged: a worker killed in between leaves the job to be run again, and that run
 * settles what the last one logged (delivered, or its outcome) without sending again, then lets the next go.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { DelayedError, UnrecoverableError, type Job } from 'bullmq'
import { databaseErrorKind } from '../db/database-errors.js'
import type { OutboundJobData } from './delivery-job.js'
import { runAttempt, type DeliverDeps } from './run-attempt.js'

/** How often, a second apart, the release is tried while the database is out of reach, the job held meanwhile. */
const RELEASE_TRIES = 30
const RELEASE_RETRY_MS = 1000

/** True when this error ends the job: BullMQ will not run it again. */
export function endsJob (job: Job<OutboundJobData>, err: unknown): boolean {
  if (err instanceof DelayedError) return false
  return err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
}

export async function runInOrder (job: Job<OutboundJobData>, token: string | undefined, deps: DeliverDeps): Promise<void> {
  if (job.data.orderingKey === undefined || deps.store.releaseOrdered === undefined) return await runAttempt(job, token, deps)
  try {
    await runAttempt(job, token, deps)
  } catch (err) {
    if (endsJob(job, err)) await releaseNext(job, deps)
    throw err
  }
  await releaseNext(job, deps)
}

/** Lets the key's next message go; waits out a database that cannot be reached, holding the job (a kill then runs it again). */
export async function releaseNext (job: Job<OutboundJobData>, deps: DeliverDeps): Promise<void> {
  const { messageId, endpointId, orderingKey } = job.data
  if (orderingKey === undefined || deps.store.releaseOrdered === undefined) return
  for (let tries = 1; ; tries++) {
    try {
      await deps.store.releaseOrdered(messageId, endpointId, orderingKey)
      return
    } catch (err) {
      const kind = databaseErrorKind(err)
      if ((kind !== 'unavailable' && kind !== 'conflict') || tries >= RELEASE_TRIES) {
        deps.log.error({ jobId: job.id, endpointId, err: (err as Error).message }, 'anvil delivery: the key\'s next message could not be let go')
        throw err
      }
      await sleep(RELEASE_RETRY_MS)
    }
  }
}
