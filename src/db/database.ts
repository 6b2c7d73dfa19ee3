import pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import {
  DEFAULT_DB_CONNECT_TIMEOUT_MS, DEFAULT_DB_POOL_SIZE, DEFAULT_DB_SCHEMA, DEFAULT_DB_STATEMENT_TIMEOUT_MS
} from '../shared/constants.js'
import { errors } from '../shared/errors.js'
import { qualify } from './qualify.js'
import { databaseUrlProblem } from './database-url.js'
import { SCHEMA_NAME_PATTERN, SCHEMA_NAME_RULE, SchemaName } from '../shared/schemas.js'
import { throwInvalid } from '../shared/validate.js'

/** A PostgreSQL connection given as a URL (Anvil creates and closes a pool) or a `pg.Pool` (the caller owns it). */
export type DatabaseInput = string | pg.Pool

const SCHEMA_NAME = new RegExp(SCHEMA_NAME_PATTERN)

export const DatabaseOptionsSchema = Type.Object({
  /** @defaultValue `'anvil'` */
  schema: Type.Optional(SchemaName()),
  /** Pool size when Anvil makes the pool. @defaultValue 10 */
  max: Type.Optional(Type.Integer({ minimum: 1 }))
}, { additionalProperties: false })

export type DatabaseOptions = Static<typeof DatabaseOptionsSchema>

export interface Database {
  readonly pool: pg.Pool
  readonly schema: string
  /** True when Anvil created the pool and so must end it. */
  readonly owned: boolean
  /** A table's qualified, quoted name: `"anvil"."endpoints"`. */
  table (name: string): string
  close (): Promise<void>
}

export function isPool (value: unknown): value is pg.Pool {
  return typeof value === 'object' && value !== null && typeof (value as pg.Pool).connect === 'function' &&
    typeof (value as pg.Pool).query === 'function' && typeof (value as pg.Pool).end === 'function'
}

export function checkSchema (schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new errors.INVALID_OPTIONS(`database schema must match ${String(SCHEMA_NAME)} (${SCHEMA_NAME_RULE}), got ${JSON.stringify(schema)}`)
  }
  return schema
}

/**
 * Opens Anvil's view of a database. A pool made here has a bounded connect time and statement timeout, so a
 * PostgreSQL that stops answering cannot hold a request or a job for ever.
 */
export function openDatabase (input: DatabaseInput, options: DatabaseOptions = {}): Database {
  const schema = checkSchema(options.schema ?? DEFAULT_DB_SCHEMA)
  let pool: pg.Pool
  let owned = false
  if (typeof input === 'string') {
    throwInvalid(databaseUrlProblem(input), 'database URL ')
    pool = new pg.Pool({
      connectionString: input,
      max: options.max ?? DEFAULT_DB_POOL_SIZE,
      connectionTimeoutMillis: DEFAULT_DB_CONNECT_TIMEOUT_MS,
      statement_timeout: DEFAULT_DB_STATEMENT_TIMEOUT_MS,
      // No JIT: a statement over the days of a partitioned table (migrations 0013, 0028) is priced high and runs in
      // milliseconds, and JIT would compile hundreds of expressions for it first (seconds).
      options: '-c jit=off',
      keepAlive: true
    })
    // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
    pool.on('error', () => {})
    owned = true
  } else if (isPool(input)) {
    pool = input
  } else {
    throw new errors.INVALID_OPTIONS('database must be a postgres:// URL or a pg.Pool')
  }
  hearLostConnections(pool)
  return {
    pool,
    schema,
    owned,
    table: (name) => qualify(schema, name),
    async close () {
      if (owned) await pool.end()
    }
  }
}

/** Runs `fn` in a transaction on one client: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T> (pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  // A connection lost mid-transaction fails the query at hand; pg also emits it as 'error', which a checked-out client
  // has no pool listener for, so unheard it would crash the process (a PostgreSQL restart during any transaction).
  client.on('error', ignoreLostConnection)
  try {
    await client.query('BEGIN')
    const result = await fn(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    client.removeListener('error', ignoreLostConnection)
    client.release()
  }
}

function ignoreLostConnection (): void {}

const hearing = new WeakSet<pg.Pool>()

/**
 * Every client of the pool hears its own 'error': a checked-out client (a journal transaction, a group commit, a
 * partition lock) whose connection PostgreSQL ends would otherwise crash the process; its query fails instead.
 */
function hearLostConnections (pool: pg.Pool): void {
  if (hearing.has(pool)) return
  hearing.add(pool)
  pool.on('connect', (client) => { client.on('error', ignoreLostConnection) })
}
