import type { WebhookJobData } from '../queue/job-data.js'
import type { WebhookEvent } from '../worker/webhook-event.js'
import { errorClassOf } from '../shared/error-class-of.js'
import { errorMessageOf } from '../shared/error-message-of.js'
import { journalIdOf } from './journal-id-of.js'
import type { CommitOutcome, EffectScope, LaterOutcome } from './effect-scope.js'
import type { Journal } from './journal.js'
import { outcomeRow } from './journal-writer.js'
import { compileCheck } from '../shared/validate.js'
import { Subject } from '../erasure/erasure-schemas.js'

export interface JournaledJob {
  jobId: string
  data: WebhookJobData
  attempt: number
  maxAttempts: number
  /** The job was started before without an outcome (a stall, a crash): it may have committed its `done`. */
  restarted?: boolean
}

/**
 * `ran`: the handler ran and its outcome is recorded. The handler did not run, or its writes were rolled back,
 * when the job had committed its `done` already (`done`: a stall, a crash or a redelivery ran it again) or a
 * journal replay has taken the event to another job (`overtaken`).
 */
export type JournaledOutcome = 'ran' | 'done' | 'overtaken'

const checkSubject = compileCheck(Subject())
/** A subject as erasure takes it (src/erasure/erasure-schemas.ts), or a TypeError the handler sees at once. */
function checkedSubject (subject: string): string {
  const problem = checkSubject(subject)
  if (problem !== undefined) throw new TypeError(`event.subject(): the subject ${problem.replace(/^[^ ]* /, '')}`)
  return subject
}

/** BullMQ's own test for a handler that gave up (an UnrecoverableError, or an error so named). */
const gaveUp = (err: unknown): boolean => (err as Error | null)?.name === 'UnrecoverableError'

/**
 * Process, then store once: the handler runs, then the event's row is written with its outcome, in the
 * handler's transaction when it began one (its effects, its writes and the row commit together, once per
 * job: the row refuses a second `done`), else batched with other events' rows. The job is the event until then
 * (it stays in Redis until its outcome is written). A failure rolls the transaction back and writes the
 * attempt (`dead` when it was the last). A job that may have run before asks the row first, so a job that
 * committed its `done` does not run its handler again.
 */
export async function runJournaled (journal: Journal, handler: (event: WebhookEvent) => unknown, event: WebhookEvent, job: JournaledJob): Promise<JournaledOutcome> {
  const { jobId, data, attempt, maxAttempts } = job
  const id = journalIdOf(data)
  const startedAt = new Date()
  const ticket = journal.groups?.enter()
  let start = 'run'
  try {
    if (attempt > 1 || job.restarted === true) start = await journal.admits({ id, jobId, data })
  } finally {
    if (start !== 'run') ticket?.leave()
  }
  if (start !== 'run') return start as JournaledOutcome
  // The handler's `event.subject(…)`, else the journal's `subjectPath`, tags the event's row.
  let chosen: string | undefined
  event.subject = (subject: string) => { chosen = checkedSubject(subject) }
  const subjectNow = (): { subject?: string } => {
    const subject = chosen ?? journal.subjectOf?.(event)
    return subject === undefined ? {} : { subject }
  }
  const done = { id, jobId, attempt, status: 'done', startedAt, data } as const

  async function run (scope: EffectScope): Promise<CommitOutcome | LaterOutcome> {
    Object.assign(event, scope.fields)
    try {
      await handler(event)
      return await scope.commitDone(outcomeRow({ ...done, ...subjectNow() }))
    } catch (err) {
      await scope.rollback()
      throw err
    }
  }
  let committed: CommitOutcome
  try {
    committed = journal.groups === undefined || ticket === undefined
      ? await run(journal.scope(id)) as CommitOutcome
      // A job that may have run before claims its effects first, so that it finds a stored result.
      : await journal.groups.run(ticket, async (host) => await run(journal.scope(id, attempt > 1 || job.restarted === true ? { ...host, defer: undefined } : host)))
  } catch (err) {
    const status = attempt >= maxAttempts || gaveUp(err) ? 'dead' : 'failed'
    // The attempt fails either way; a journal that cannot record it now has no row for it yet (or the last one).
    await journal.finished({ id, jobId, attempt, status, lastError: errorMessageOf(err), errorClass: errorClassOf(err), startedAt, data, ...subjectNow() }).catch(() => {})
    throw err
  }
  // A handler that began no transaction: its row goes in the next batched write.
  if (committed === 'no-transaction') await journal.finished({ ...done, ...subjectNow() })
  if (committed !== 'refused') return 'ran'
  const now = await journal.admits({ id, jobId, data })
  return now === 'overtaken' ? 'overtaken' : 'done'
}
