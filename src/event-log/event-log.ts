/**
 * What the admin API and the CLI work on: the journal in PostgreSQL when there is a database, else the dead
 * letters in Redis, behind one interface (src/event-log/pg-event-log.ts, src/event-log/redis-event-log.ts), so the
 * same commands and routes work on both.
 */
import { JournalQueueSchema } from '../journal/journal-options.js'
import { Type, type Static } from '@sinclair/typebox'
import type { DatabaseInput } from '../db/database.js'
import type { RedisInput } from '../redis/connect.js'
import { InboundQueue, Opaque, RetentionSchema, SchemaName } from '../shared/schemas.js'
import type { EventDetail, EventPage } from './event-queries.js'
import type { EventReplayResult } from './event-replay.js'
import type { ReplayRunStatus } from './replay-runs.js'
import type { EventStats } from './journal-stats.js'
import type { JournalErasure } from '../erasure/journal-erasure.js'

export const EventLogOptionsSchema = Type.Object({
  /** Where replays are enqueued (and, without a database, where the dead letters are). */
  redis: Opaque<RedisInput>(),
  /** The journal: a PostgreSQL URL or a `pg.Pool` (left open). @defaultValue none: the dead letters in Redis */
  database: Type.Optional(Opaque<DatabaseInput>()),
  /** @defaultValue `'anvil'` */
  schema: Type.Optional(SchemaName()),
  ...InboundQueue(),
  /** Retention for replayed jobs (what is not given keeps its default). */
  retention: Type.Optional(RetentionSchema),
  /** With a database: `'postgres'` queues replays in the journal's own queue (the workers' `journal.queue`). @defaultValue `'bullmq'` */
  journalQueue: Type.Optional(JournalQueueSchema)
}, { additionalProperties: false })

export type EventLogOptions = Static<typeof EventLogOptionsSchema>

export interface PageRequest { limit?: number, cursor?: string }

export interface EventLog {
  /** `journal` with a database, `dead-letters` without. */
  readonly kind: 'journal' | 'dead-letters'
  list (filter: unknown, page?: PageRequest): Promise<EventPage>
  get (id: string): Promise<EventDetail>
  replay (id: string): Promise<EventReplayResult>
  /** How many events a replay of this filter would take now. */
  count (filter: unknown): Promise<number>
  startReplay (filter: unknown, ratePerSecond?: number): Promise<{ id: string, matched: number }>
  replayStatus (id: string): Promise<ReplayRunStatus>
  cancelReplay (id: string): Promise<ReplayRunStatus>
  resumeReplay (id: string): Promise<ReplayRunStatus>
  /** Resolves when a run this process started stops. */
  waitReplay (id: string): Promise<ReplayRunStatus>
  deadLetters (page?: PageRequest): Promise<EventPage>
  stats (windowMs: number): Promise<EventStats>
  /** With a database: erasure of a subject's events (`DELETE /admin/subjects/:subject`; docs/journal.md, "Erasure"). */
  readonly erasure?: JournalErasure
  close (): Promise<void>
}
