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

/** BullMQ's own test for a handler that gave up (an UnrecoverableError, or an error so named). */
const gaveUp = (err: unknown): boolean => (err as Error | null)?.name === 'UnrecoverableError'

/**
 * Store, then process (false: not run, a replay has taken the event to another job): the row says `processing` before the handler runs; the handler's effects and its mark
 * `done` commit together; a failure rolls them back and records the attempt (`dead` when it was the last).
 */
export async function runJournaled (journal: Journal, handler: (event: WebhookEvent) => unknown, event: WebhookEvent, job: JournaledJob): Promise<boolean> {
  const { jobId, data, attempt, maxAttempts } = job
  const id = journalIdOf(data)
  const startedAt = new Date()
  // A retry that a journal replay has overtaken: the event runs on the replay's job, not here as well.
  if (!await journal.started({ id, jobId, attempt, data })) return false
  const scope = journal.scope(id, jobId)
  Object.assign(event, scope.fields)
  try {
    await handler(event)
    if (!await scope.commitDone(attempt, startedAt)) await journal.finished({ id, jobId, attempt, status: 'done', startedAt })
    return true
  } catch (err) {
    await scope.rollback()
    const status = attempt >= maxAttempts || gaveUp(err) ? 'dead' : 'failed'
    // The attempt fails either way; a journal that cannot record it now still shows `processing`.
    await journal.finished({ id, jobId, attempt, status, lastError: errorMessageOf(err), errorClass: errorClassOf(err), startedAt }).catch(() => {})
    throw err
  }
}
