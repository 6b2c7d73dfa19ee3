/** The `journal` option of the worker (and the admin API): the schema, whose `Static<>` is its type. */
import { Type, type Static } from '@sinclair/typebox'
import type { DatabaseInput } from '../db/database.js'
import { Opaque, RetentionDays, SchemaName, Whole } from '../shared/schemas.js'

/** Journal days older than this are dropped. */
export const DEFAULT_JOURNAL_RETENTION_DAYS = 30
/** How often the worker deletes expired rows. */
export const DEFAULT_JOURNAL_RETENTION_INTERVAL_MS = 60 * 60 * 1000
/** Events one journal write carries at most. */
export const DEFAULT_JOURNAL_WRITE_BATCH = 200

export const GroupCommitSchema = Type.Object({
  /** Events one commit carries at most (2 to 1,000). */
  maxEvents: Whole(2, 1000),
  /** How long a group waits for more events after its first one, in ms (at most 1,000). */
  maxWaitMs: Whole(0, 1000)
}, { additionalProperties: false })

export type GroupCommitOptions = Static<typeof GroupCommitSchema>

/** Where the journal's events wait for their handler: BullMQ in Redis (the default), or the journal's own table. */
export const JournalQueueSchema = Type.Union([Type.Literal('bullmq'), Type.Literal('postgres')])
export type JournalQueue = Static<typeof JournalQueueSchema>

/** How often a worker on the PostgreSQL queue reads it when no NOTIFY came. */
export const DEFAULT_JOURNAL_POLL_MS = 1000

/** Names separated by dots, none empty. */
export const SubjectPath = () => Type.String({ pattern: '^[^.\\s]+(\\.[^.\\s]+)*$', maxLength: 200, errorMessage: 'must be a dotted path such as data.object.customer' })

export const JournalOptionsSchema = Type.Object({
  /** A PostgreSQL URL (Anvil makes a pool and ends it) or a `pg.Pool` (left open). Migrate it first (`anvil migrate`). */
  database: Opaque<DatabaseInput>(),
  /** The schema the journal's tables are in. @defaultValue `'anvil'` */
  schema: Type.Optional(SchemaName()),
  /** The journal's days older than this many are dropped by the worker (at most 36,500); 0 keeps them. @defaultValue 30 */
  retentionDays: Type.Optional(RetentionDays()),
  /** How often the worker makes the days ahead and drops expired ones, after a pass at start; 0 never (another worker does). @defaultValue 3600000 (an hour) */
  retentionIntervalMs: Type.Optional(Whole(0)),
  /** Events one journal write carries at most. @defaultValue 200 */
  writeBatch: Type.Optional(Whole(1, 10_000)),
  /**
   * `false`: the journal's batched row writes (of handlers that began no transaction, and failed attempts)
   * commit without waiting for the disk. Faster; a crash of PostgreSQL itself (not of a worker) may lose the
   * last fraction of a second of them. The handler's transaction (`db`, `once`, its row) always commits
   * durably. @defaultValue true
   */
  synchronousCommit: Type.Optional(Type.Boolean()),
  /**
   * Group commit: up to `maxEvents` events commit together, their rows and effects in one statement (handlers
   * that write through `event.db` one after another, each in a savepoint); docs/journal.md says what it trades.
   * @defaultValue off
   */
  groupCommit: Type.Optional(GroupCommitSchema),
  /**
   * `'postgres'`: events wait in the journal's database (`webhook_event_queue`, migration 0016) instead of BullMQ:
   * the ingress (given the same `journal: { queue: 'postgres' }`) inserts them, workers claim them with
   * `FOR UPDATE SKIP LOCKED`, woken by NOTIFY; no Redis round trip per event (docs/journal.md). @defaultValue `'bullmq'`
   */
  queue: Type.Optional(JournalQueueSchema),
  /** With `queue: 'postgres'`: how often the queue is read when no NOTIFY came (at least 10 ms). @defaultValue 1000 */
  pollIntervalMs: Type.Optional(Whole(10, 600_000)),
  /**
   * A dotted path into each event's JSON body (`data.object.customer`) whose value (a string, or a number) tags the
   * event with a data subject; a handler's `event.subject(…)` overrides it. `DELETE /admin/subjects/:subject` erases
   * a subject's events (docs/journal.md, "Erasure"). @defaultValue none
   */
  subjectPath: Type.Optional(SubjectPath())
}, { additionalProperties: false })

export type JournalOptions = Static<typeof JournalOptionsSchema>
