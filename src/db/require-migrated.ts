import type { AnvilLogger } from '../shared/logger.js'
import { errors } from '../shared/errors.js'
import * as record from '../sql/schema-migrations.js'
import type { Database } from './database.js'
import { databaseErrorKind } from './database-errors.js'
import { loadMigrations } from './migrate.js'

/**
 * The one rule for "is this database migrated": every migration this package ships is in the schema's
 * `schema_migrations` (a schema the runner never saw lacks them all). A database migrated by a later release
 * has more, which is fine.
 */
export async function missingMigrations (db: Database): Promise<string[]> {
  let applied: Set<string>
  try {
    const { rows } = await db.pool.query<{ version: string }>(record.applied(db.schema))
    applied = new Set(rows.map((row) => row.version))
  } catch (err) {
    if (databaseErrorKind(err) !== 'unmigrated') throw err
    applied = new Set()
  }
  return loadMigrations().filter((one) => !applied.has(one.version)).map((one) => `${one.version}_${one.name}`)
}

/** Throws NOT_MIGRATED, naming what is missing and what to run, when the schema lacks a shipped migration. */
export async function requireMigrated (db: Database): Promise<void> {
  const missing = await missingMigrations(db)
  if (missing.length === 0) return
  const which = missing.length === 1 ? missing[0] : `${missing.length} migrations, ${missing[0]} to ${missing.at(-1)}`
  throw new errors.NOT_MIGRATED(`schema "${db.schema}" lacks ${which}`)
}

/**
 * A plugin's check when it starts: an unmigrated database fails the start; one out of reach is a warning, and
 * its routes answer 503 until it is back (or NOT_MIGRATED, should it come back unmigrated).
 */
export async function requireMigratedAtStart (db: Database, log: AnvilLogger, who: string): Promise<void> {
  try {
    await requireMigrated(db)
  } catch (err) {
    if (databaseErrorKind(err) !== 'unavailable') throw err
    log.warn({ err: (err as Error).message }, `${who}: the database is out of reach, its schema is not checked; run anvil migrate before using it`)
  }
}
