/**
 * `inbound.dead_lettered`: an inbound event ended in the dead letters. Sent when the worker journals (its
 * database holds the outbox): written before the dead letter, under an id of the letter's, so the listener and
 * the sweep write it once and a crash between the two writes loses neither.
 */
import type { Database } from '../db/database.js'
import { journalIdOf } from '../journal/journal-id-of.js'
import { consoleLink, operationalId, publishOperational, type OperationalEvent } from '../endpoints/operational-events.js'
import { databaseErrorKind } from '../db/database-errors.js'
import type { AnvilLogger } from '../shared/logger.js'
import type { DeadLetterData, ReportDeadLetter } from './dead-letter.js'

export function deadLetteredEvent (letterId: string, letter: DeadLetterData, consoleUrl: string | undefined): OperationalEvent {
  const { job, failureContext } = letter
  const eventId = journalIdOf(job)
  return {
    id: operationalId('dead', letterId),
    type: 'inbound.dead_lettered',
    tenant: null,
    data: {
      eventId,
      deadLetterId: letterId,
      jobId: letter.originalJobId,
      source: job.source,
      provider: job.provider ?? null,
      eventType: job.eventType ?? null,
      tenant: null,
      reason: failureContext.reason,
      attempts: failureContext.attempts,
      lastError: failureContext.lastError,
      failedAt: new Date(failureContext.failedAt).toISOString(),
      link: consoleLink(consoleUrl, `/events/${encodeURIComponent(eventId)}`)
    }
  }
}

/**
 * What the dead-lettering calls before it adds a letter: the event, in the journal's database. While the database
 * cannot be reached it throws, and the letter waits for the sweep; any other error (a database not migrated to
 * 0011) is logged and the letter made: an event of ours never holds an inbound event out of the dead letters.
 */
export function reportDeadLetter (db: Database, consoleUrl: string | undefined, log: AnvilLogger): ReportDeadLetter {
  return async (letterId, letter) => {
    try {
      await publishOperational(db.pool, db.schema, deadLetteredEvent(letterId, letter, consoleUrl))
    } catch (err) {
      if (databaseErrorKind(err) === 'unavailable') throw err
      log.error({ deadLetterId: letterId, err: (err as Error).message }, 'anvil worker: inbound.dead_lettered not written')
    }
  }
}
