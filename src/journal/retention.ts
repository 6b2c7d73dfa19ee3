import type { Database } from '../db/database.js'
import { DEFAULT_DELETE_BATCH, deleteInBatches } from '../db/batched-delete.js'
import * as replayRuns from '../sql/replay_runs.js'
import * as webhookEvents from '../sql/webhook_events.js'

/**
 * Deletes journal rows received more than `days` ago (their effects go with them: ON DELETE CASCADE), and
 * finished replay runs as old, a batch per statement so no lock is held for long; rows another transaction
 * holds are skipped until the next pass. Returns how many events it deleted.
 */
export async function deleteExpired (db: Database, days: number, batch = DEFAULT_DELETE_BATCH): Promise<number> {
  if (days <= 0) return 0
  const deleted = await deleteInBatches(db.pool, webhookEvents.deleteExpired(db.schema), [days], batch)
  await db.pool.query(replayRuns.deleteFinished(db.schema), [days])
  return deleted
}
