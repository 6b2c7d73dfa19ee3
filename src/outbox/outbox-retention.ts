/**
 * Outbox retention: old history goes, nothing in flight does.
 *
 * - `pending` messages (not dispatched yet, or their dispatch being retried) are never deleted, whatever their age.
 * - `dispatched` and `failed` (dispatch given up) messages are deleted with their whole delivery log once they
 *   have been idle for the age: created, dispatched (or last tried) and every delivery attempt, re-sends
 *   included, longer ago than that. Never sooner than RETENTION_FLOOR_MS (7 days) after the last attempt, so a
 *   delivery whose next retry is still due, or held back behind an open circuit, keeps its message and its log.
 * - Delivery-log rows whose message is no longer in the outbox go at the same age.
 *
 * A delivery job carries its own body, so even a job held back past all of this (a backlog of weeks) is still
 * sent; its attempt is then logged without the older history.
 */
import type { Database } from '../db/database.js'
import { DEFAULT_DELETE_BATCH, deleteInBatches, inBatches } from '../db/batched-delete.js'
import { deleteOrphans } from '../sql/deliveries.js'
import { deleteIdle } from '../sql/outbox.js'
import { MAX_RETRY_WAIT_MS } from '../delivery/delivery-schedule.js'
import { DEFAULT_DISABLE_AFTER_MS } from '../delivery/delivery-options.js'

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * The least idle time, whatever the setting: the longest retry wait, plus the time an endpoint may fail before
 * it is disabled by default, during which its jobs can be held back (circuit open, rate limit) with no attempt logged.
 */
export const RETENTION_FLOOR_MS = MAX_RETRY_WAIT_MS + DEFAULT_DISABLE_AFTER_MS

export interface OutboxPruned {
  messages: number
  /** Delivery-log rows: those of the messages deleted, and older ones whose message was already gone. */
  deliveries: number
}

/** How long a message must have been idle to go: the age, or RETENTION_FLOOR_MS if that is longer. */
export function idleSeconds (days: number): number {
  return Math.max(days * DAY_MS, RETENTION_FLOOR_MS) / 1000
}

/** The two statements of a pass; `$1` is idleSeconds, `$2` the batch. Exported so a test can EXPLAIN them. */
export function retentionStatements (db: Database): { messages: string, orphans: string } {
  return { messages: deleteIdle(db.schema), orphans: deleteOrphans(db.schema) }
}

/** One retention pass, a batch of messages per statement (with their log); 0 days deletes nothing. */
export async function deleteIdleMessages (db: Database, days: number, batch = DEFAULT_DELETE_BATCH): Promise<OutboxPruned> {
  if (days <= 0) return { messages: 0, deliveries: 0 }
  const sql = retentionStatements(db)
  const idle = idleSeconds(days)
  let logged = 0
  const messages = await inBatches(batch, async (size) => {
    const { rows } = await db.pool.query<{ messages: number, deliveries: number }>(sql.messages, [idle, size])
    logged += rows[0]?.deliveries ?? 0
    return rows[0]?.messages ?? 0
  })
  const orphans = await deleteInBatches(db.pool, sql.orphans, [idle], batch)
  return { messages, deliveries: logged + orphans }
}
