/**
 * What a handler gets from the journal: `db`, a transaction begun on first use; `once(action, fn)`, an effect
 * recorded under `{eventId}:{action}` in that transaction; and `effectKey(action)` for effects elsewhere. The
 * effects, the handler's writes and the mark `done` commit together, or none of them does.
 */
import type pg from 'pg'
import type { Database } from '../db/database.js'
import { errors } from '../shared/errors.js'
import { doneSql } from './journal-writer.js'

/** The handler's PostgreSQL client: `query` runs in the event's transaction (promise style). */
export interface JournalDb {
  query: pg.ClientBase['query']
}

export interface EffectFields {
  /** A `pg` client in the event's transaction, begun on the first query; committed with the mark `done`. */
  db: JournalDb
  /**
   * Runs `fn` the first time `action` is done for this event and stores its result (JSON); later calls, a
   * retry's or a concurrent run's, return the stored result without running `fn`.
   */
  once: <T>(action: string, fn: () => T | Promise<T>) => Promise<T>
  /** `{eventId}:{action}`: the idempotency key to give a downstream API for an effect outside the database. */
  effectKey: (action: string) => string
}

export interface EffectScope {
  fields: EffectFields
  /** Marks the event done, in the transaction when one was begun (then commits): true when it did so. */
  commitDone: (attempt: number) => Promise<boolean>
  /** Rolls back whatever the handler did through `db` and `once`. */
  rollback: () => Promise<void>
}

export function effectScope (db: Database, eventId: string, jobId: string): EffectScope {
  const effects = db.table('webhook_effects')
  const markDone = doneSql(db.table('webhook_events'))
  let client: pg.PoolClient | undefined
  let opening: Promise<pg.PoolClient> | undefined
  let savepoints = 0

  async function transaction (): Promise<pg.PoolClient> {
    opening ??= (async () => {
      const c = await db.pool.connect()
      try {
        await c.query('BEGIN')
      } catch (err) {
        c.release(err as Error)
        throw err
      }
      client = c
      return c
    })()
    return await opening
  }

  function effectKey (action: string): string {
    if (typeof action !== 'string' || action === '') throw new errors.INVALID_OPTIONS('once/effectKey: the action must be a non-empty string')
    return `${eventId}:${action}`
  }

  async function once<T> (action: string, fn: () => T | Promise<T>): Promise<T> {
    const key = effectKey(action)
    const c = await transaction()
    // A savepoint, so a failed effect that the handler catches leaves no claim behind.
    const savepoint = `anvil_once_${++savepoints}`
    await c.query(`SAVEPOINT ${savepoint}`)
    // A concurrent run of the same event waits here on the key until this transaction ends, then sees its result.
    const claimed = await c.query(`INSERT INTO ${effects} (key, event_id, action) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING RETURNING key`,
      [key, eventId, action])
    if (claimed.rowCount === 0) {
      await c.query(`RELEASE SAVEPOINT ${savepoint}`)
      const { rows } = await c.query<{ result: T }>(`SELECT result FROM ${effects} WHERE key = $1`, [key])
      return rows[0]?.result as T
    }
    try {
      const result = await fn()
      await c.query(`UPDATE ${effects} SET result = $2::jsonb WHERE key = $1`, [key, JSON.stringify(result ?? null)])
      await c.query(`RELEASE SAVEPOINT ${savepoint}`)
      return result
    } catch (err) {
      await c.query(`ROLLBACK TO SAVEPOINT ${savepoint}`).catch(() => {})
      throw err
    }
  }

  const query = (async (...args: unknown[]) => {
    const c = await transaction()
    return await (c.query as (...a: unknown[]) => Promise<unknown>)(...args)
  }) as unknown as pg.ClientBase['query']

  function release (err?: Error): void {
    client?.release(err)
    client = undefined
  }

  return {
    fields: { db: { query }, once, effectKey },
    async commitDone (attempt) {
      if (opening === undefined) return false
      const c = await opening
      try {
        await c.query(markDone, [eventId, jobId, attempt])
        await c.query('COMMIT')
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        release()
        throw err
      }
      release()
      return true
    },
    async rollback () {
      if (opening === undefined) return
      const c = await opening.catch(() => undefined)
      if (c === undefined) return
      // A client whose rollback failed is broken: destroyed rather than returned to the pool.
      const failed = await c.query('ROLLBACK').then(() => undefined, (err: Error) => err)
      release(failed)
    }
  }
}
