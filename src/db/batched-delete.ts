/**
 * Retention's deletes, a batch per statement: each statement is its own short transaction, and rows another
 * transaction holds (`FOR UPDATE SKIP LOCKED` in the caller's SQL) are left for the next pass.
 */
import type pg from 'pg'

/** Rows a retention statement deletes at most, so no statement holds its locks for long. */
export const DEFAULT_DELETE_BATCH = 1000

/** Runs `step` (one statement that deletes at most `batch` rows and says how many) until a step deletes fewer. */
export async function inBatches (batch: number, step: (batch: number) => Promise<number>): Promise<number> {
  // A step that may delete nothing would never delete fewer than it may: no end.
  if (!(batch >= 1)) throw new RangeError(`a delete batch must be at least 1, not ${batch}`)
  let deleted = 0
  for (;;) {
    const count = await step(batch)
    deleted += count
    if (count < batch) return deleted
  }
}

/** A `DELETE … LIMIT $n` run in batches; the batch size is its last parameter. Returns the rows deleted. */
export async function deleteInBatches (pool: pg.Pool, sql: string, values: unknown[], batch = DEFAULT_DELETE_BATCH): Promise<number> {
  return await inBatches(batch, async (size) => (await pool.query(sql, [...values, size])).rowCount ?? 0)
}
