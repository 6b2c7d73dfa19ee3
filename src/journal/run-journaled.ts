import type { WebhookJobData } from '../queue/job-data.js'
import type { WebhookEvent } from '../worker/webhook-event.js'
import { errorClassOf, errorMessageOf, journalIdOf } from './event-row.js'
import type { Journal } from './journal.js'

export interface JournaledJob {
  jobId: string
  data: WebhookJobData
  attempt: number
  maxAttempts: number
}

/**
 * `ran`: the handler ran and its outcome is recorded. The handler did not run, or its writes were rolled back,
 * when the job had committed its `done` already (`done`: a stall, a crash or a redelivery ran it again) or a
 * journal replay has taken the event to another job (`overtaken`).
 */
export type JournaledOutcome = 'ran' | 'done' | 'overtaken'

/** BullMQ's own test for a handler that gave up (an UnrecoverableError, or an error so named). */
const gaveUp = (err: unknown): boolean => (err as Error | null)?.name === 'UnrecoverableError'

/**
 * Store, then process: the row says `processing` before the handler runs; the handler's effects and the job's
 * `done` commit together, once per job; a failure rolls them back and records the attempt (`dead` when it was
 * the last).
 */
export async function runJournaled (journal: Journal, handler: (event: WebhookEvent) => unknown, event: WebhookEvent, job: JournaledJob): Promise<JournaledOutcome> {
  const { jobId, data, attempt, maxAttempts } = job
  const id = journalIdOf(data)
  const startedAt = new Date()
  const start = await journal.started({ id, jobId, attempt, data })
  if (start !== 'run') return start
  const scope = journal.scope(id, jobId)
  Object.assign(event, scope.fields)
  try {
    await handler(event)
    const committed = await scope.commitDone(attempt, startedAt)
    // Without a transaction the batched write marks the event. After another run's commit it puts the row,
    // which this run's start may have set to `processing` again, back to `done` (and logs nothing twice).
    if (committed !== 'committed') await journal.finished({ id, jobId, attempt, status: 'done', startedAt })
    return committed === 'done-before' ? 'done' : 'ran'
  } catch (err) {
    await scope.rollback()
    const status = attempt >= maxAttempts || gaveUp(err) ? 'dead' : 'failed'
    // The attempt fails either way; a journal that cannot record it now still shows `processing`.
    await journal.finished({ id, jobId, attempt, status, lastError: errorMessageOf(err), errorClass: errorClassOf(err), startedAt }).catch(() => {})
    throw err
  }
}
