/**
 * Keeps a table partitioned by day (src/sql/day-partitions.ts) small: the days ahead exist before rows come,
 * and retention drops a day once all of it is past, instead of deleting rows. The clock is given, so a test
 * can run a month in a moment.
 */
import type pg from 'pg'
import type { Database } from './database.js'
import { inTransaction } from './database.js'
import { inBatches, DEFAULT_DELETE_BATCH } from './batched-delete.js'
import { qualify } from './qualify.js'
import * as sql from '../sql/day-partitions.js'

/** A table partitioned by day: its name and its partition key's column. */
export interface DayPartitioned { table: string, key: string }

export interface PartitionPass {
  /** What time it is. */
  now: Date
  /** Days kept before today's; 0 keeps every day. */
  retentionDays: number
  /** Days made after today's, so rows never wait for one. */
  daysAhead: number
}

export interface PartitionResult { created: string[], dropped: string[], deletedFromDefault: number }

const DAY_MS = 86_400_000
const dayStart = (time: Date): Date => new Date(Math.floor(time.getTime() / DAY_MS) * DAY_MS)

/** How long a partition's create or drop waits for the table's lock before leaving it to the next pass. */
const LOCK_TIMEOUT = '2s'
const LOCK_NOT_AVAILABLE = '55P03'

/** Runs `work` in a transaction that waits at most LOCK_TIMEOUT for a lock; false when it gave up (a long transaction holds the table: the next pass tries again). */
async function briefly (db: Database, work: (client: pg.PoolClient) => Promise<void>): Promise<boolean> {
  return await inTransaction(db.pool, async (client) => {
    await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`)
    await work(client)
    return true
  }).catch((err: unknown) => {
    if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) return false
    throw err
  })
}

/**
 * Runs `pass` unless another process is running one on this schema (a session advisory lock on a client of its
 * own): workers that prune at once would race to make the same day.
 */
export async function aloneOnSchema<T> (db: Database, name: string, pass: () => Promise<T>, skipped: T): Promise<T> {
  const client = await db.pool.connect()
  try {
    const { rows } = await client.query<{ locked: boolean }>(sql.tryLock(), [`${name}:${db.schema}`])
    if (rows[0]?.locked !== true) return skipped
    try {
      return await pass()
    } finally {
      await client.query(sql.unlock(), [`${name}:${db.schema}`])
    }
  } finally {
    client.release()
  }
}

/** One pass over `table`: makes the days ahead, drops the days past retention, and deletes the DEFAULT partition's past rows. */
export async function maintainDays (db: Database, { table, key }: DayPartitioned, pass: PartitionPass): Promise<PartitionResult> {
  const today = dayStart(pass.now)
  const { rows } = await db.pool.query<{ name: string }>(sql.partitionsOf(), [qualify(db.schema, table)])
  const days = new Map(rows.flatMap(({ name }) => {
    const day = sql.dayOf(table, name)
    return day === undefined ? [] : [[day.getTime(), name] as const]
  }))
  const result: PartitionResult = { created: [], dropped: [], deletedFromDefault: 0 }
  for (let n = 0; n <= pass.daysAhead; n++) {
    const day = new Date(today.getTime() + n * DAY_MS)
    if (days.has(day.getTime())) continue
    const created = await briefly(db, async (client) => {
      // The DEFAULT partition holds rows of a day made late: they move into it.
      const { rows: late } = await client.query(sql.lateRows(db.schema, table, key), [day, new Date(day.getTime() + DAY_MS)])
      for (const statement of late.length === 0 ? [sql.createDay(db.schema, table, day)] : sql.adoptDay(db.schema, table, key, day)) await client.query(statement)
    })
    if (created) result.created.push(sql.dayPartition(table, day))
  }
  if (pass.retentionDays <= 0) return result
  // A day goes once its last instant is older than the retention (its rows stay up to a day longer).
  const cutoff = new Date(pass.now.getTime() - pass.retentionDays * DAY_MS)
  for (const [time, name] of [...days].sort(([a], [b]) => a - b)) {
    if (time + DAY_MS > cutoff.getTime()) continue
    if (await briefly(db, async (client) => { await client.query(sql.dropDay(db.schema, table, new Date(time))) })) result.dropped.push(name)
  }
  const statement = sql.deleteDefaultBefore(db.schema, table, key)
  result.deletedFromDefault = await inBatches(DEFAULT_DELETE_BATCH, async (batch) => (await db.pool.query(statement, [cutoff, batch])).rowCount ?? 0)
  return result
}
