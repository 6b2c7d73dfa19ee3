/**
 * A PostgreSQL database of its own for one test file, on the machine's server (127.0.0.1:5432, trust auth as
 * `postgres`, or ANVIL_TEST_PG_URL): created with a unique name, dropped (with its connections) at the end.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { migrate } from '../../src/db/migrate.js'

const ADMIN_URL = process.env.ANVIL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export class TestDatabase {
  private readonly pools: pg.Pool[] = []
  private queries: pg.Pool | undefined

  private constructor (readonly name: string, readonly url: string) {}

  static async create (): Promise<TestDatabase> {
    const name = `anvil_test_${process.pid}_${randomBytes(4).toString('hex')}`
    await adminQuery(`CREATE DATABASE ${pg.escapeIdentifier(name)}`)
    const url = new URL(ADMIN_URL)
    url.pathname = `/${name}`
    return new TestDatabase(name, url.toString())
  }

  /** A database with every migration applied. */
  static async migrated (): Promise<TestDatabase> {
    const db = await TestDatabase.create()
    try {
      await migrate(db.url)
    } catch (err) {
      await db.drop()
      throw err
    }
    return db
  }

  /** A new pool on this database, ended by drop(): make it once per file or test, never per query. */
  pool (max = 5): pg.Pool {
    const pool = new pg.Pool({ connectionString: this.url, max })
    pool.on('error', () => {})
    this.pools.push(pool)
    return pool
  }

  /** A query on the file's one small pool (two connections at most, however often a test polls). */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow> (text: string, values?: unknown[]): Promise<R[]> {
    this.queries ??= this.pool(2)
    return (await this.queries.query<R>(text, values)).rows
  }

  /**
   * Ends the pools and drops the database. PostgreSQL 15 runs a checkpoint for each DROP DATABASE (0.4–3 s on a
   * busy machine), so by default a detached process drops it and the test file ends at once; `wait` is for a test
   * that needs the database gone before it goes on.
   */
  async drop ({ wait = false }: { wait?: boolean } = {}): Promise<void> {
    this.queries = undefined
    await Promise.all(this.pools.splice(0).map(async (pool) => await pool.end().catch(() => {})))
    const sql = `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(this.name)} WITH (FORCE)`
    if (wait) await adminQuery(sql)
    else dropDetached(sql)
  }
}

const PG_MODULE = pathToFileURL(createRequire(import.meta.url).resolve('pg')).href

/** psql when the machine has it (about 0.01 CPU-s a drop, against 0.25 for a node process), node otherwise. */
function dropDetached (sql: string): void {
  const env: NodeJS.ProcessEnv = { ...process.env, ANVIL_DROP_SQL: sql, ANVIL_DROP_URL: ADMIN_URL }
  delete env.NODE_OPTIONS
  const psql = spawn('psql', ['-X', '-q', '-d', ADMIN_URL, '-c', sql], { detached: true, stdio: 'ignore', env })
  psql.on('error', () => {
    const code = `const { default: pg } = await import(${JSON.stringify(PG_MODULE)}); const c = new pg.Client({ connectionString: process.env.ANVIL_DROP_URL }); await c.connect(); await c.query(process.env.ANVIL_DROP_SQL); await c.end()`
    spawn(process.execPath, ['--input-type=module', '-e', code], { detached: true, stdio: 'ignore', env }).unref()
  })
  psql.unref()
}

async function adminQuery (text: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}
