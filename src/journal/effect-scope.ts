/**
 * What a handler gets from the journal: `db`, a transaction begun on first use; `once(action, fn)`, an effect
 * recorded under `{eventId}:{action}` in that transaction; and `effectKey(action)` for effects elsewhere. The
 * effects, the handler's writes and the mark `done` commit together, or none of them does.
 */
import type pg from 'pg'
import type { Database } from '../db/database.js'
import { errors } from '../shared/errors.js'
import { claimAll, finishOne, finishValues, REFUSED, type EffectRow, type OutcomeRow } from '../sql/webhook-event-outcome.js'
import * as webhookEffects from '../sql/webhook-effects.js'
import { execute, notePrepareError } from '../db/session-statement.js'

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
 * `committed`: the handler's writes and the event's row, `done`, committed together; `no-transaction`: the
 * handler began none (the caller writes the row); `refused`: the row refused this job's `done` (another run of
 * it committed first, or a replay moved the event to another job), so this run's writes were rolled back.
 */
export type CommitOutcome = 'committed' | 'no-transaction' | 'refused'

/** An outcome known once a group commits (src/journal/group-commit.ts): the event's row went in its statement. */
export interface LaterOutcome { later: Promise<CommitOutcome> }

export interface EffectScope {
  fields: EffectFields
  /**
   * Writes the event's row (a statement that raises when refused) and commits, when a transaction was begun; in
   * a group, an event that began none hands its row and effects to the group's statement.
   */
  commitDone: (row: OutcomeRow) => Promise<CommitOutcome | LaterOutcome>
  /** Rolls back whatever the handler did through `db` and `once`. */
  rollback: () => Promise<void>
}

/** Where an event's transaction runs: a client of its own, or a savepoint of a group's (src/journal/group-commit.ts). */
export interface TransactionHost {
  /** The client, and the statement that opens the event's transaction on it (sent with its first ones). */
  open: () => Promise<{ client: pg.PoolClient, begin: string }>
  /** Ends the event's transaction, after its row: commits it, or releases its savepoint. */
  end: string
  /** Undoes the event's transaction. */
  undo: string
  /** Gives the client back; `err`: it is broken. */
  release: (err?: Error) => void
  /** The row goes in this transaction even when the handler began none (a group's: its commit is shared). */
  always: boolean
  /**
   * A group's: an event that began no transaction writes its row and its `once` effects in the group's one
   * statement, at its commit; `once` runs `fn` and claims its key then.
   */
  defer?: (row: OutcomeRow, effects: EffectRow[]) => Promise<CommitOutcome>
}

/** A transaction of the event's own, on a client from the pool. */
export function ownTransaction (pool: pg.Pool): TransactionHost {
  let client: pg.PoolClient | undefined
  return {
    open: async () => ({ client: client = await pool.connect(), begin: 'BEGIN' }),
    end: 'COMMIT',
    undo: 'ROLLBACK',
    release: (err) => { client?.release(err) },
    always: false
  }
}

/**
 * Runs several statements in one round trip (the simple protocol, values inlined as escaped literals) and
 * returns the last one's result: the journal's own statements cost one trip each step.
 */
async function batch<R extends pg.QueryResultRow> (client: pg.PoolClient, statements: string[]): Promise<pg.QueryResult<R>> {
  const results = await client.query<R>(statements.join('; ')).catch((err: unknown) => {
    notePrepareError(client, err)
    throw err
  }) as pg.QueryResult<R> | Array<pg.QueryResult<R>>
  return Array.isArray(results) ? results[results.length - 1] as pg.QueryResult<R> : results
}

/** An effect's result not yet stored, and the savepoint of its claim (none when the claim opened the transaction). */
interface PendingResult { key: string, json: string, savepoint?: string }

/**
 * `queued`: the journal's PostgreSQL queue; the event's queue row is deleted with its row written `done`.
 */
/** The statement that releases `savepoint`, if there is one. */
const releasing = (savepoint?: string): string[] => savepoint === undefined ? [] : [`RELEASE SAVEPOINT ${savepoint}`]

export function effectScope (db: Database, eventId: string, host = ownTransaction(db.pool), queued = false): EffectScope {
  let opening: Promise<pg.PoolClient> | undefined
  /** The client went back (the transaction ended): nothing more is sent on it. */
  let released = false
  let savepoints = 0
  /**
   * Effects' results, which need no answer: stored ahead of the transaction's next statements, or by the
   * statement that writes the event's row.
   */
  let pending: PendingResult[] = []
  /** Effects run before any transaction, in a group: claimed at its commit (or when a transaction opens). */
  const deferred = new Map<string, EffectRow>()

  /** `statements` after what is pending, in one round trip. */
  async function send<R extends pg.QueryResultRow> (c: pg.PoolClient, statements: string[]): Promise<pg.QueryResult<R>> {
    const all = [...pending.flatMap((p) => [webhookEffects.storeResult(db.schema, p.key, p.json), ...releasing(p.savepoint)]), ...statements]
    pending = []
    return await batch<R>(c, all)
  }

  function release (err?: Error): void {
    if (released) return
    released = true
    host.release(err)
  }

  /** The transaction's client; the first use opens it with `first`'s statements, in one round trip. */
  async function transaction (first: (c: pg.PoolClient) => string[] = () => []): Promise<{ client: pg.PoolClient, result?: pg.QueryResult }> {
    if (opening !== undefined) return { client: await opening }
    let result: pg.QueryResult | undefined
    opening = (async () => {
      const { client: c, begin } = await host.open()
      try {
        result = await batch(c, [begin, ...first(c)])
      } catch (err) {
        release(await c.query(host.undo).then(() => undefined, (failed: Error) => failed))
        throw err
      }
      return c
    })()
    const c = await opening
    await claimDeferred(c)
    return { client: c, result }
  }

  /**
   * The effects run before the transaction opened, claimed in it: a key another run recorded first means `fn`'s
   * result here is not the stored one, so the attempt fails and its retry returns the stored one.
   */
  async function claimDeferred (c: pg.PoolClient): Promise<void> {
    if (deferred.size === 0) return
    const effects = [...deferred.values()]
    deferred.clear()
    const { rowCount } = await send(c, [claimAll(db.schema, effects)])
    if (rowCount !== effects.length) throw new errors.ONCE_TAKEN(eventId)
  }

  function effectKey (action: string): string {
    if (typeof action !== 'string' || action === '') throw new errors.INVALID_OPTIONS('once/effectKey: the action must be a non-empty string')
    return `${eventId}:${action}`
  }

  async function once<T> (action: string, fn: () => T | Promise<T>): Promise<T> {
    const key = effectKey(action)
    if (host.defer !== undefined && opening === undefined) {
      const earlier = deferred.get(key)
      if (earlier !== undefined) return JSON.parse(earlier.result) as T
      const result = await fn()
      deferred.set(key, { key, event_id: eventId, action, result: JSON.stringify(result ?? null) })
      // `fn` began the transaction (through `db`): the claim goes in it now.
      if (opening !== undefined) await claimDeferred(await opening)
      return result
    }
    // A savepoint, so a failed effect that the handler catches leaves no claim behind; none when the claim opens
    // the event's own transaction (a failure then rolls all of it back: the same undo, without a subtransaction).
    // A concurrent run of the same event waits on the key's insert until this transaction ends, then finds the
    // stored result.
    const savepoint = opening === undefined && !host.always ? undefined : `anvil_once_${++savepoints}`
    const claim = (c: pg.PoolClient): string[] => [...(savepoint === undefined ? [] : [`SAVEPOINT ${savepoint}`]),
      execute(c, webhookEffects.claim(db.schema), [key, eventId, action])]
    const begun = await transaction(claim)
    const c = begun.client
    const claimed = begun.result ?? await send(c, claim(c))
    if (claimed.rowCount === 0) {
      const { rows } = await send<{ result: T }>(c, [...releasing(savepoint), webhookEffects.resultOf(db.schema, key)])
      return rows[0]?.result as T
    }
    try {
      const result = await fn()
      // Sent with the transaction's next statements (at the latest, in the row's statement): one round trip less.
      pending.push({ key, json: JSON.stringify(result ?? null), savepoint })
      return result
    } catch (err) {
      if (savepoint !== undefined) await c.query(`ROLLBACK TO SAVEPOINT ${savepoint}`).catch(() => {})
      else {
        // The transaction is gone with the claim: the handler's next use of `db` or `once` opens another.
        await undo()
        opening = undefined
        released = false
      }
      throw err
    }
  }

  const query = (async (...args: unknown[]) => {
    const { client: c } = await transaction()
    if (pending.length > 0) await send(c, [])
    return await (c.query as (...a: unknown[]) => Promise<unknown>)(...args)
  }) as unknown as pg.ClientBase['query']

  /** Undoes the transaction, if one is open. A client whose undo failed is broken: destroyed, not reused. */
  async function undo (): Promise<void> {
    deferred.clear()
    if (opening === undefined || released) return
    const c = await opening.catch(() => undefined)
    if (c === undefined || released) return
    pending = []
    release(await c.query(host.undo).then(() => undefined, (err: Error) => err))
  }

  return {
    fields: { db: { query }, once, effectKey },
    async commitDone (row) {
      if (opening === undefined && host.defer !== undefined) {
        const later = host.defer(row, [...deferred.values()])
        deferred.clear()
        // Awaited after the group's commit; a rejection must not surface before.
        later.catch(() => {})
        return { later }
      }
      if (opening === undefined && !host.always) return 'no-transaction'
      // The event's row, the effects' results and the end in one round trip: a row that refuses this job raises,
      // and the end is not reached. The end releases the claims' savepoints with the rest.
      try {
        const { client: c } = await transaction()
        // The last effect's result goes in the row's statement; any before it (a handler with several) ahead of it.
        const last = pending.pop()
        await send(c, [execute(c, finishOne(db.schema, queued), finishValues(row, last)), host.end])
      } catch (err) {
        await undo()
        if ((err as { code?: string }).code === REFUSED) return 'refused'
        throw err
      }
      release()
      return 'committed'
    },
    rollback: undo
  }
}
