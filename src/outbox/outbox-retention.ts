/**
 * Outbox retention: old history goes, nothing in flight does.
 *
 * - `pending` messages (not dispatched yet, or their dispatch being retried) are never deleted, whatever their age.
 * - `dispatched` and `failed` (dispatch given up) messages are deleted once they have been idle for the age:
 *   created, dispatched (or last tried) and every delivery attempt, re-sends included, longer ago than that. Never
 *   sooner than RETENTION_FLOOR_MS (7 days) after the last attempt, so a delivery whose next retry is still due,
 *   or held back behind an open circuit, keeps its message.
 * - The delivery log is partitioned by day (migration 0028): a day goes whole once all of it is older than the
 *   age, whatever its messages, instead of row by row. The pass also makes the days ahead, so rows never wait in
 *   the DEFAULT partition; it runs with a retention of 0 too (then it drops nothing).
 *
 * A delivery job carries its own body, so even a job held back past all of this (a backlog of weeks) is still
 * sent; its attempt is then logged without the older history.
 */
import type { Database } from '../db/database.js'
import { DEFAULT_DELETE_BATCH, inBatches } from '../db/batched-delete.js'
import { aloneOnSchema, maintainDays, type DayPartitioned } from '../db/day-partitions.js'
import { deleteIdle } from '../sql/outbox.js'
import { MAX_RETRY_WAIT_MS } from '../delivery/delivery-schedule.js'
import { DEFAULT_DISABLE_AFTER_MS } from '../delivery/delivery-options.js'

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * The least idle time, whatever the setting: the longest retry wait, plus the time an endpoint may fail before
 * it is disabled by default, during which its jobs can be held back (circuit open, rate limit) with no attempt logged.
 */
export const RETENTION_FLOOR_MS = MAX_RETRY_WAIT_MS + DEFAULT_DISABLE_AFTER_MS

/** The delivery log, partitioned by its attempts' created_at (migration 0028). */
export const DELIVERY_LOG_DAYS: DayPartitioned = { table: 'deliveries', key: 'created_at' }

/** Days of the delivery log made ahead of today, so the dispatching process can be down that long. */
export const DELIVERY_LOG_DAYS_AHEAD = 3

export interface OutboxPruned {
  messages: number
  /** The delivery log's days dropped, whole. */
  days: string[]
  /** Delivery-log rows deleted one by one: those of the DEFAULT partition (a day made late) past the age. */
  deliveries: number
}

/** How long a message must have been idle to go: the age, or RETENTION_FLOOR_MS if that is longer. */
export function idleSeconds (days: number): number {
  return Math.max(days * DAY_MS, RETENTION_FLOOR_MS) / 1000
}

/** The pass's statement over the outbox; `$1` is idleSeconds, `$2` the batch. Exported so a test can EXPLAIN it. */
export function retentionStatements (db: Database): { messages: string } {
  return { messages: deleteIdle(db.schema) }
}

/**
 * One retention pass at `now`: makes the delivery log's days ahead and drops its days older than the age (one
 * process at a time per schema: two would race to make the same day), and deletes idle messages a batch per
 * statement (any number of processes at once: SKIP LOCKED); 0 days deletes nothing.
 */
export async function deleteIdleMessages (db: Database, days: number, batch = DEFAULT_DELETE_BATCH, now = new Date()): Promise<OutboxPruned> {
  // A day goes once all of it is older than the age (its rows stay up to a day longer).
  const retentionDays = days <= 0 ? 0 : Math.ceil(idleSeconds(days) / 86_400)
  const log = await aloneOnSchema(db, 'anvil-delivery-log-days', async () =>
    await maintainDays(db, DELIVERY_LOG_DAYS, { now, retentionDays, daysAhead: DELIVERY_LOG_DAYS_AHEAD }), undefined)
  const pruned: OutboxPruned = { messages: 0, days: log?.dropped ?? [], deliveries: log?.deletedFromDefault ?? 0 }
  if (days <= 0) return pruned
  const statement = retentionStatements(db).messages
  pruned.messages = await inBatches(batch, async (size) => (await db.pool.query<{ messages: number }>(statement, [idleSeconds(days), size])).rows[0]?.messages ?? 0)
  return pruned
}
