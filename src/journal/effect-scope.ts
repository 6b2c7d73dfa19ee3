/**
 * What a handler gets from the journal: `db`, a transaction begun on first use; `once(action, fn)`, an effect
 * recorded under `{eventId}:{action}` in that transaction; and `effectKey(action)` for effects elsewhere. The
 * effects, the handler's writes and the mark `done` commit together, or none of them does.
 */
import pg from 'pg'
import type { Database } from '../db/database.js'
import { errors } from '../shared/errors.js'

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

/**
 * `committed`: the handler's writes and the job's `done` committed together; `no-transaction`: the handler began
 * none (the caller marks the event); `done-before`: this job had already committed its `done` (another run of
 * it), so this run's writes were rolled back.
 */
export type CommitOutcome = 'committed' | 'no-transaction' | 'done-before'

/** The index (migration 0006) that lets a job commit its `done` attempt once. */
const DONE_ONCE = 'webhook_event_attempts_done_once'

export interface EffectScope {
  fields: EffectFields
  /** Logs the job's `done` attempt, marks the event done if the job holds it, and commits, in the transaction when one was begun. */
  commitDone: (attempt: number, startedAt?: Date) => Promise<CommitOutcome>
  /** Rolls back whatever the handler did through `db` and `once`. */
  rollback: () => Promise<void>
}

const literal = (value: string): string => pg.escapeLiteral(value)

/**
 * Runs several statements in one round trip (the simple protocol, values inlined as escaped literals) and
 * returns the last one's result: the journal's own statements cost one trip each step.
 */
async function batch<R extends pg.QueryResultRow> (client: pg.PoolClient, statements: string[]): Promise<pg.QueryResult<R>> {
  const results = await client.query<R>(statements.join('; ')) as pg.QueryResult<R> | Array<pg.QueryResult<R>>
  return Array.isArray(results) ? results[results.length - 1] as pg.QueryResult<R> : results
}

export function effectScope (db: Database, eventId: string, jobId: string): EffectScope {
  const effects = db.table('webhook_effects')
  const events = db.table('webhook_events')
  const attempts = db.table('webhook_event_attempts')
  let client: pg.PoolClient | undefined
  let opening: Promise<pg.PoolClient> | undefined
  let savepoints = 0
  /** Statements that need no answer (an effect's result), sent ahead of the transaction's next ones. */
  let pending: string[] = []

  /** `statements` after what is pending, in one round trip. */
  async function send<R extends pg.QueryResultRow> (c: pg.PoolClient, statements: string[]): Promise<pg.QueryResult<R>> {
    const all = [...pending, ...statements]
    pending = []
    return await batch<R>(c, all)
  }

  /** The transaction's client; the first use sends BEGIN with `first`, in one round trip. */
  async function transaction (first: string[] = []): Promise<{ client: pg.PoolClient, result?: pg.QueryResult }> {
    if (opening !== undefined) return { client: await opening }
    let result: pg.QueryResult | undefined
    opening = (async () => {
      const c = await db.pool.connect()
      try {
        result = await batch(c, ['BEGIN', ...first])
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        c.release()
        throw err
      }
      client = c
      return c
    })()
    const c = await opening
    return { client: c, result }
  }

  function effectKey (action: string): string {
    if (typeof action !== 'string' || action === '') throw new errors.INVALID_OPTIONS('once/effectKey: the action must be a non-empty string')
    return `${eventId}:${action}`
  }

  async function once<T> (action: string, fn: () => T | Promise<T>): Promise<T> {
    const key = literal(effectKey(action))
    // A savepoint, so a failed effect that the handler catches leaves no claim behind. A concurrent run of the
    // same event waits on the key's insert until this transaction ends, then finds the stored result.
    const savepoint = `anvil_once_${++savepoints}`
    const claim = [`SAVEPOINT ${savepoint}`,
      `INSERT INTO ${effects} (key, event_id, action) VALUES (${key}, ${literal(eventId)}, ${literal(action)}) ON CONFLICT (key) DO NOTHING RETURNING key`]
    const begun = await transaction(claim)
    const c = begun.client
    const claimed = begun.result ?? await send(c, claim)
    if (claimed.rowCount === 0) {
      const { rows } = await send<{ result: T }>(c, [`RELEASE SAVEPOINT ${savepoint}`, `SELECT result FROM ${effects} WHERE key = ${key}`])
      return rows[0]?.result as T
    }
    try {
      const result = await fn()
      // Sent with the transaction's next statements (at the latest, with the commit): one round trip less.
      pending.push(`UPDATE ${effects} SET result = ${literal(JSON.stringify(result ?? null))}::jsonb WHERE key = ${key}`, `RELEASE SAVEPOINT ${savepoint}`)
      return result
    } catch (err) {
      await c.query(`ROLLBACK TO SAVEPOINT ${savepoint}`).catch(() => {})
      throw err
    }
  }

  const query = (async (...args: unknown[]) => {
    const { client: c } = await transaction()
    if (pending.length > 0) await send(c, [])
    return await (c.query as (...a: unknown[]) => Promise<unknown>)(...args)
  }) as unknown as pg.ClientBase['query']

  function release (err?: Error): void {
    client?.release(err)
    client = undefined
  }

  return {
    fields: { db: { query }, once, effectKey },
    async commitDone (attempt, startedAt) {
      if (opening === undefined) return 'no-transaction'
      const c = await opening
      const began = startedAt === undefined ? 'NULL' : `${literal(startedAt.toISOString())}::timestamptz`
      try {
        // The job's `done` attempt always goes with its writes (the unique index refuses a second one, which
        // rolls this run back); the event's row only when the job holds it (a replay's is the replay's). One
        // round trip with the commit.
        await send(c, [`WITH marked AS (UPDATE ${events} SET status = 'done', attempts = ${Number(attempt)}, last_error = NULL,
          error_class = NULL, processed_at = now(), updated_at = now() WHERE id = ${literal(eventId)} AND job_id = ${literal(jobId)} RETURNING id)
          INSERT INTO ${attempts} (event_id, attempt, started_at, status, job_id)
          VALUES (${literal(eventId)}, ${Number(attempt)}, ${began}, 'done', ${literal(jobId)})`, 'COMMIT'])
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {})
        release()
        if ((err as { constraint?: string }).constraint === DONE_ONCE) return 'done-before'
        throw err
      }
      release()
      return 'committed'
    },
    async rollback () {
      if (opening === undefined) return
      const c = await opening.catch(() => undefined)
      if (c === undefined) return
      // A client whose rollback failed is broken: destroyed rather than returned to the pool.
      pending = []
      const failed = await c.query('ROLLBACK').then(() => undefined, (err: Error) => err)
      release(failed)
    }
  }
}
