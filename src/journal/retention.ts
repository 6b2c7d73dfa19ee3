import type { Database } from '../db/database.js'
import { DEFAULT_DELETE_BATCH, deleteInBatches } from '../db/batched-delete.js'
import { aloneOnSchema, maintainDays, type DayPartitioned } from '../db/day-partitions.js'
import * as replayRuns from '../sql/replay-runs.js'
import * as webhookEffects from '../sql/webhook-effects.js'

/** The journal's tables partitioned by day (migration 0013), each by its event's received_at. */
export const JOURNAL_DAY_TABLES: readonly DayPartitioned[] = [
  { table: 'webhook_events', key: 'received_at' },
  { table: 'webhook_event_failures', key: 'event_received_at' }
]

/** Days made ahead of today, so the worker can be down that long before rows fall into the DEFAULT partitions. */
export const JOURNAL_DAYS_AHEAD = 3

export interface RetentionResult {
  /** The day partitions dropped. */
  dropped: string[]
  /** Rows deleted one by one: effects, and any in the DEFAULT partitions. */
  deleted: number
}

/**
 * One retention pass at `now`: makes the journal's days ahead, drops the days received more than `days` ago
 * (their attempt logs with them), and deletes effects as old and finished replay runs, a batch per statement
 * (effects are not partitioned: their key must hold across deliveries). `days` 0 keeps everything.
 */
export async function pruneJournal (db: Database, days: number, now = new Date(), batch = DEFAULT_DELETE_BATCH): Promise<RetentionResult> {
  // One pass at a time per schema: every worker prunes, and two would race to make the same day.
  return await aloneOnSchema(db, 'anvil-journal-retention', async () => await prunePass(db, days, now, batch), { dropped: [], deleted: 0 })
}

async function prunePass (db: Database, days: number, now: Date, batch: number): Promise<RetentionResult> {
  const result: RetentionResult = { dropped: [], deleted: 0 }
  for (const table of JOURNAL_DAY_TABLES) {
    const pass = await maintainDays(db, table, { now, retentionDays: days, daysAhead: JOURNAL_DAYS_AHEAD })
    result.dropped.push(...pass.dropped)
    result.deleted += pass.deletedFromDefault
  }
  if (days <= 0) return result
  const cutoff = new Date(now.getTime() - days * 86_400_000)
  result.deleted += await deleteInBatches(db.pool, webhookEffects.deleteCreatedBefore(db.schema), [cutoff], batch)
  await db.pool.query(replayRuns.deleteFinished(db.schema), [days])
  return result
}
