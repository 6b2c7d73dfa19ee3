/** The journal as the worker uses it: its database, the batched writer, a handler's effect scope, retention. */
import { openDatabase, type Database } from '../db/database.js'
import { compileCheck, throwInvalid } from '../shared/validate.js'
import { createJournalWriter, type JournalWriter } from './journal-writer.js'
import { effectScope, type EffectScope, type TransactionHost } from './effect-scope.js'
import { GroupCommitter } from './group-commit.js'
import { pruneJournal, type RetentionResult } from './retention.js'
import {
  DEFAULT_JOURNAL_RETENTION_DAYS, DEFAULT_JOURNAL_RETENTION_INTERVAL_MS, DEFAULT_JOURNAL_WRITE_BATCH, JournalOptionsSchema,
  type JournalOptions
} from './journal-options.js'

export interface Journal extends JournalWriter {
  readonly db: Database
  /** A handler's transaction: its own, or `host`'s savepoint in a group. */
  scope (eventId: string, host?: TransactionHost): EffectScope
  /** With `groupCommit`: the groups the handlers run in. */
  readonly groups?: GroupCommitter
  /** One retention pass now: the days ahead made, the days past retention dropped. */
  prune (): Promise<RetentionResult>
  readonly retentionIntervalMs: number
  close (): Promise<void>
}

const checkOptions = compileCheck(JournalOptionsSchema)

/** The first problem with the journal options as one line, or undefined. */
export function journalOptionsProblem (options: unknown): string | undefined {
  return checkOptions(options)
}

export function openJournal (options: JournalOptions): Journal {
  throwInvalid(checkOptions(options), 'journal.')
  const db = openDatabase(options.database, { schema: options.schema })
  // On the PostgreSQL queue, a job's queue row is deleted by the statement that writes its outcome `done` or `dead`.
  const queued = options.queue === 'postgres'
  const writer = createJournalWriter(db, options.writeBatch ?? DEFAULT_JOURNAL_WRITE_BATCH, options.synchronousCommit ?? true, queued)
  const days = options.retentionDays ?? DEFAULT_JOURNAL_RETENTION_DAYS
  return {
    ...writer,
    db,
    scope: (eventId, host) => effectScope(db, eventId, host, queued),
    ...(options.groupCommit === undefined ? {} : { groups: new GroupCommitter(db, options.groupCommit, queued) }),
    prune: async () => await pruneJournal(db, days),
    retentionIntervalMs: options.retentionIntervalMs ?? DEFAULT_JOURNAL_RETENTION_INTERVAL_MS,
    close: async () => await db.close()
  }
}
