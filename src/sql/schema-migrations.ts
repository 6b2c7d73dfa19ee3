/** The migration runner's record of what was applied: one row per version, with the checksum it was applied with. */
import pg from 'pg'

const record = (schema: string): string => `${pg.escapeIdentifier(schema)}.schema_migrations`

/** Holds off every other migration run on the schema until the transaction ends: `$1` the lock's name. */
export const lock = (): string => 'SELECT pg_advisory_xact_lock(hashtext($1))'

export const createSchema = (schema: string): string => `CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`

export const createTable = (schema: string): string => `CREATE TABLE IF NOT EXISTS ${record(schema)} (
  version text PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`

export const applied = (schema: string): string => `SELECT version, checksum FROM ${record(schema)}`

/** `$1` version, `$2` name, `$3` checksum. */
export const recordApplied = (schema: string): string =>
  `INSERT INTO ${record(schema)} (version, name, checksum) VALUES ($1, $2, $3)`

/** `$1` version, `$2` its checksum in the current form. */
export const rewriteChecksum = (schema: string): string =>
  `UPDATE ${record(schema)} SET checksum = $2 WHERE version = $1`
