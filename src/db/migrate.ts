import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { errors } from '../shared/errors.js'
import * as record from '../sql/schema-migrations.js'
import { inTransaction, isPool, openDatabase, type Database, type DatabaseInput, type DatabaseOptions } from './database.js'

/** `0001_outbound.sql`: a four-digit version, then a name. Applied in version order, each once. */
const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/
/** Written in the SQL files where the schema's quoted name goes, so the schema stays configurable. */
const SCHEMA_TOKEN = /\{\{schema\}\}/g
/**
 * Whole-file checksums that builds before comments stopped counting recorded, for the files whose comments were
 * edited since (so the whole file no longer gives them). Their statements are what those builds applied.
 */
const EARLIER_CHECKSUMS: Readonly<Record<string, readonly string[]>> = {
  '0002': ['b3cacde9cd6678b39236bafa01a5ca9a72532c775f04d4a3c95965f39493ddec'],
  '0003': ['5594c294fb5fa608ac7b66bcf0d54cc4987af9fa7d7b168b6ddaafcd3842c8e8']
}

export interface Migration {
  version: string
  name: string
  sql: string
  /** Over the statements only (blank and `--` comment lines left out): editing a comment changes nothing. */
  checksum: string
  /** The whole-file checksums earlier builds recorded for it, accepted and rewritten to `checksum`. */
  earlierChecksums: string[]
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
  const migrations = readdirSync(dir).filter((file) => MIGRATION_FILE.test(file)).sort().map((file) => {
    const [, version = '', name = ''] = MIGRATION_FILE.exec(file) ?? []
    const sql = readFileSync(join(dir, file), 'utf8')
    const earlierChecksums = [sha256(sql), ...EARLIER_CHECKSUMS[version] ?? []]
    return { version, name, sql, checksum: sha256(statementsOf(sql)), earlierChecksums }
  })
  // Two files of one version would each pass for the other's change once the first is applied.
  const twice = migrations.find((migration, i) => migrations[i - 1]?.version === migration.version)
  if (twice !== undefined) throw new errors.INVALID_CONFIG(`two migrations share version ${twice.version} in ${dir}: give one the next free number`)
  return migrations
}

/** A migration's statements: its lines without blank lines and `--` comment lines. */
function statementsOf (sql: string): string {
  return sql.split('\n').map((line) => line.trimEnd()).filter((line) => line !== '' && !line.trimStart().startsWith('--')).join('\n')
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/**
 * Applies the migrations the database lacks, in one transaction under an advisory lock, so processes that
 * start together apply each once. Idempotent. A migration whose statements changed after it was applied is refused.
 */
export async function migrate (database: DatabaseInput | Database, options: DatabaseOptions & { dir?: string } = {}): Promise<MigrateResult> {
  const db = typeof database === 'string' || isPool(database) ? openDatabase(database, options) : database
  try {
    const migrations = loadMigrations(options.dir)
    const schema = pg.escapeIdentifier(db.schema)
    return await inTransaction(db.pool, async (client) => {
      await client.query(record.lock(), [`anvil-migrate:${db.schema}`])
      await client.query(record.createSchema(db.schema))
      await client.query(record.createTable(db.schema))
      const { rows } = await client.query<{ version: string, checksum: string }>(record.applied(db.schema))
      const done = new Map(rows.map((row) => [row.version, row.checksum]))
      const applied: string[] = []
      for (const migration of migrations) {
        const checksum = done.get(migration.version)
        if (checksum === migration.checksum) continue
        if (checksum !== undefined) {
          if (!migration.earlierChecksums.includes(checksum)) throw new errors.MIGRATION_CHANGED(`${migration.version}_${migration.name}`)
          await client.query(record.rewriteChecksum(db.schema), [migration.version, migration.checksum])
          continue
        }
        await client.query(migration.sql.replace(SCHEMA_TOKEN, schema))
        await client.query(record.recordApplied(db.schema), [migration.version, migration.name, migration.checksum])
        applied.push(migration.version)
      }
      return { applied, current: [...done.keys(), ...applied].sort() }
    })
  } finally {
    if (db !== database) await db.close()
  }
}
