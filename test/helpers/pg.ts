/**
 * A PostgreSQL database of its own for one test file, on the machine's server (127.0.0.1:5432, trust auth as
 * `postgres`, or ANVIL_TEST_PG_URL): created with a unique name, dropped (with its connections) at the end.
 */
import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { loadMigrations, migrate } from '../../src/db/migrate.js'
import { DEFAULT_DB_SCHEMA } from '../../src/shared/constants.js'

const ADMIN_URL = process.env.ANVIL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
/** The templates a tap run migrates once (see `migrated`); test/helpers/after-run.ts drops those of its run. */
export const TEMPLATE_PREFIX = 'anvil_test_template_'

export class TestDatabase {
  private readonly pools: pg.Pool[] = []
  private queries: pg.Pool | undefined

  private constructor (readonly name: string, readonly url: string) {}

  static async create (template?: string): Promise<TestDatabase> {
    const name = `anvil_test_${process.pid}_${randomBytes(4).toString('hex')}`
    await adminQuery(`CREATE DATABASE ${pg.escapeIdentifier(name)}${template === undefined ? '' : ` TEMPLATE ${pg.escapeIdentifier(template)}`}`)
    return new TestDatabase(name, urlOf(name))
  }

  /**
   * A database with every migration applied. Under tap it is a copy of a template the run migrates once (0.11 CPU-s
   * of PostgreSQL against 0.56 for applying them all); run alone, a file applies them itself.
   */
  static async migrated (): Promise<TestDatabase> {
    if (process.env.TAP === '1') {
      const { name, redrawDeploymentId } = await migratedTemplate()
      const db = await TestDatabase.create(name)
      await db.query(redrawDeploymentId)
      return db
    }
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

function urlOf (name: string): string {
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return url.toString()
}

interface Template {
  name: string
  /**
   * Migration 0004's own statement that draws the deployment id, after emptying the table: a copy would keep the
   * template's, and two deployments tell their databases apart by it.
   */
  redrawDeploymentId: string
}

let template: Promise<Template> | undefined

/**
 * The run's template for this set of migrations: made by the first file that needs it, under an advisory lock, and
 * marked a template (no connections) once migrated, so a half-made one from a killed file is made again. The run
 * is tap's runner, every test file's parent; a process a test starts inherits ANVIL_TEST_RUN.
 */
async function migratedTemplate (): Promise<Template> {
  template ??= (async () => {
    process.env.ANVIL_TEST_RUN ??= String(process.ppid)
    const migrations = loadMigrations()
    const draw = /^INSERT INTO \{\{schema\}\}\.deployment\b[^;]*;/m.exec(migrations.find((m) => m.version === '0004')?.sql ?? '')?.[0]
    if (draw === undefined) throw new Error('migrations/0004 no longer draws the deployment id as test/helpers/pg.ts expects')
    const schema = pg.escapeIdentifier(DEFAULT_DB_SCHEMA)
    const redrawDeploymentId = `DELETE FROM ${schema}.deployment; ${draw.replaceAll('{{schema}}', schema)}`
    const checksums = createHash('sha256').update(migrations.map((m) => m.checksum).join()).digest('hex').slice(0, 10)
    const name = `${TEMPLATE_PREFIX}${process.env.ANVIL_TEST_RUN}_${checksums}`
    const id = pg.escapeIdentifier(name)
    const client = new pg.Client({ connectionString: ADMIN_URL })
    await client.connect()
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [name])
      const { rows } = await client.query<{ datistemplate: boolean }>('SELECT datistemplate FROM pg_database WHERE datname = $1', [name])
      if (rows[0]?.datistemplate !== true) {
        if (rows.length > 0) await client.query(`DROP DATABASE ${id} WITH (FORCE)`)
        await client.query(`CREATE DATABASE ${id}`)
        await migrate(urlOf(name))
        await client.query(`ALTER DATABASE ${id} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`)
      }
    } finally {
      await client.end()
    }
    return { name, redrawDeploymentId }
  })().catch((err: unknown) => {
    template = undefined
    throw err
  })
  return await template
}

/** Drops the templates of tap run `run` (its runner's pid), and those of runs killed before their `after` script. */
export async function dropRunTemplates (run: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${TEMPLATE_PREFIX}%`])
    for (const { datname } of rows) {
      const runner = datname.slice(TEMPLATE_PREFIX.length).split('_')[0] ?? ''
      if (runner !== run && alive(Number(runner))) continue
      const id = pg.escapeIdentifier(datname)
      await client.query(`ALTER DATABASE ${id} WITH IS_TEMPLATE false`)
      await client.query(`DROP DATABASE ${id} WITH (FORCE)`)
    }
  } finally {
    await client.end()
  }
}

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
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
