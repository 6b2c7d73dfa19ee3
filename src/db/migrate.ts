import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { errors } from '../shared/errors.js'
import { inTransaction, isPool, openDatabase, type Database, type DatabaseInput, type DatabaseOptions } from './database.js'

/** `0001_outbound.sql`: a four-digit version, then a name. Applied in version order, each once. */
const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/
/** Written in the SQL files where the schema's quoted name goes, so the schema stays configurable. */
const SCHEMA_TOKEN = /\{\{schema\}\}/g

export interface Migration {
  version: string
  name: string
  sql: string
  checksum: string
}

export interface MigrateResult {
  /** Versions applied by this call, in order; empty when the database was up to date. */
  applied: string[]
  /** Every version the database now has. */
  current: string[]
}

/** The package's `migrations/` folder, found from this file in `src/db/` and in `dist/src/db/` alike. */
export function migrationsDir (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, 'migrations')) && existsSync(join(dir, 'package.json'))) return join(dir, 'migrations')
    const parent = dirname(dir)
    /* c8 ignore next -- only when the package is installed without its migrations */
    if (parent === dir) throw new errors.INVALID_CONFIG('the package has no migrations/ folder')
    dir = parent
  }
}

export function loadMigrations (dir = migrationsDir()): Migration[] {
  return readdirSync(dir).filter((file) => MIGRATION_FILE.test(file)).sort().map((file) => {
    const [, version = '', name = ''] = MIGRATION_FILE.exec(file) ?? []
    const sql = readFileSync(join(dir, file), 'utf8')
    return { version, name, sql, checksum: createHash('sha256').update(sql).digest('hex') }
  })
}

/**
 * Applies the migrations the database lacks, in one transaction under an advisory lock, so processes that
 * start together apply each once. Idempotent. A migration changed after it was applied is refused.
 */
export async function migrate (database: DatabaseInput | Database, options: DatabaseOptions & { dir?: string } = {}): Promise<MigrateResult> {
  const db = typeof database === 'string' || isPool(database) ? openDatabase(database, options) : database
  try {
    const migrations = loadMigrations(options.dir)
    const schema = pg.escapeIdentifier(db.schema)
    const record = db.table('schema_migrations')
    return await inTransaction(db.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`anvil-migrate:${db.schema}`])
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
      await client.query(`CREATE TABLE IF NOT EXISTS ${record} (
        version text PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
      const { rows } = await client.query<{ version: string, checksum: string }>(`SELECT version, checksum FROM ${record}`)
      const done = new Map(rows.map((row) => [row.version, row.checksum]))
      const applied: string[] = []
      for (const migration of migrations) {
        const checksum = done.get(migration.version)
        if (checksum !== undefined) {
          if (checksum !== migration.checksum) throw new errors.MIGRATION_CHANGED(`${migration.version}_${migration.name}`)
          continue
        }
        await client.query(migration.sql.replace(SCHEMA_TOKEN, schema))
        await client.query(`INSERT INTO ${record} (version, name, checksum) VALUES ($1, $2, $3)`,
          [migration.version, migration.name, migration.checksum])
        applied.push(migration.version)
      }
      return { applied, current: [...done.keys(), ...applied].sort() }
    })
  } finally {
    if (db !== database) await db.close()
  }
}
