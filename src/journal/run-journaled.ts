import type { WebhookJobData } from '../queue/job-data.js'
import type { WebhookEvent } from '../worker/webhook-event.js'
import { errorClassOf } from '../shared/error-class-of.js'
import { errorMessageOf } from '../shared/error-message-of.js'
import { journalIdOf } from './journal-id-of.js'
import type { CommitOutcome, EffectScope } from './effect-scope.js'
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
 * `done` commit together, once per job (in a transaction of their own, or a group's savepoint); the status
 * follows, batched. A failure rolls them back and records the attempt (`dead` when it was the last).
 */
export async function runJournaled (journal: Journal, handler: (event: WebhookEvent) => unknown, event: WebhookEvent, job: JournaledJob): Promise<JournaledOutcome> {
  const { jobId, data, attempt, maxAttempts } = job
  const id = journalIdOf(data)
  const startedAt = new Date()
  const ticket = journal.groups?.enter()
  let start
  try {
    start = await journal.started({ id, jobId, attempt, data })
  } finally {
    if (start !== 'run') ticket?.leave()
  }
  // A run that committed the job's `done` may have died before its status write: this one writes it.
  if (start === 'done') await journal.finished({ id, jobId, attempt, status: 'done', startedAt })
  if (start !== 'run') return start

  async function run (scope: EffectScope): Promise<CommitOutcome> {
    Object.assign(event, scope.fields)
    try {
      await handler(event)
      return await scope.commitDone(attempt, startedAt)
    } catch (err) {
      await scope.rollback()
      throw err
    }
  }
  try {
    const committed = journal.groups === undefined || ticket === undefined
      ? await run(journal.scope(id, jobId))
      : await journal.groups.run(ticket, async (host) => await run(journal.scope(id, jobId, host)))
    // The event's status, batched with other events' writes (with its mark when the handler began no
    // transaction). After another run's commit it puts the row, which this run's start may have set to
    // `processing` again, back to `done`.
    await journal.finished({ id, jobId, attempt, status: 'done', startedAt })
    return committed === 'done-before' ? 'done' : 'ran'
  } catch (err) {
    const status = attempt >= maxAttempts || gaveUp(err) ? 'dead' : 'failed'
    // The attempt fails either way; a journal that cannot record it now still shows `processing`.
    await journal.finished({ id, jobId, attempt, status, lastError: errorMessageOf(err), errorClass: errorClassOf(err), startedAt }).catch(() => {})
    throw err
  }
}
