import type { Database } from '../db/database.js'
import { DEFAULT_DELETE_BATCH, deleteInBatches } from '../db/batched-delete.js'

/**
 * Deletes journal rows received more than `days` ago (their effects go with them: ON DELETE CASCADE), and
 * finished replay runs as old, a batch per statement so no lock is held for long; rows another transaction
 * holds are skipped until the next pass. Returns how many events it deleted.
 */
export async function deleteExpired (db: Database, days: number, batch = DEFAULT_DELETE_BATCH): Promise<number> {
  if (days <= 0) return 0
  const events = db.table('webhook_events')
  const deleted = await deleteInBatches(db.pool, `DELETE FROM ${events} WHERE id IN (
    SELECT id FROM ${events} WHERE received_at < now() - make_interval(days => $1) LIMIT $2 FOR UPDATE SKIP LOCKED)`, [days], batch)
  await db.pool.query(`DELETE FROM ${db.table('replay_runs')} WHERE state <> 'running' AND updated_at < now() - make_interval(days => $1)`, [days])
  return deleted
}
