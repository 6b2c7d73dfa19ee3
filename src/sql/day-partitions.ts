/**
 * Tables partitioned by day (migration 0013): a partition per UTC day, named `<table>_YYYYMMDD`, and a DEFAULT
 * partition `<table>_default` for a row whose day has none. Names are made here and nowhere else.
 */
import pg from 'pg'
import { qualify } from '../db/qualify.js'

/** A day's partition's name: `webhook_events_20261206`. */
export const dayPartition = (table: string, day: Date): string => `${table}_${day.toISOString().slice(0, 10).replaceAll('-', '')}`

/** The day a partition's name says, or undefined for the DEFAULT partition and any other. */
export function dayOf (table: string, name: string): Date | undefined {
  const match = new RegExp(`^${table}_(\\d{4})(\\d{2})(\\d{2})$`).exec(name)
  return match === null ? undefined : new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00Z`)
}

export const defaultPartition = (table: string): string => `${table}_default`

/** The partitions of `$1` (the table's qualified name, as text). */
export const partitionsOf = (): string =>
  'SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass'

const bounds = (day: Date): string => {
  const next = new Date(day.getTime() + 86_400_000)
  return `FOR VALUES FROM (${pg.escapeLiteral(day.toISOString())}) TO (${pg.escapeLiteral(next.toISOString())})`
}

/** Creates `day`'s partition of `table`. Fails when the DEFAULT partition holds rows of that day (`adopt` then). */
export const createDay = (schema: string, table: string, day: Date): string =>
  `CREATE TABLE IF NOT EXISTS ${qualify(schema, dayPartition(table, day))} PARTITION OF ${qualify(schema, table)} ${bounds(day)}`

/**
 * Makes `day`'s partition out of the DEFAULT partition's rows of that day (a day no partition was made for in
 * time): moved into a new table, which is then attached. One transaction; `key` is the partition key.
 */
export function adoptDay (schema: string, table: string, key: string, day: Date): string[] {
  const part = qualify(schema, dayPartition(table, day))
  const fallback = qualify(schema, defaultPartition(table))
  const next = new Date(day.getTime() + 86_400_000)
  const range = `${key} >= ${pg.escapeLiteral(day.toISOString())} AND ${key} < ${pg.escapeLiteral(next.toISOString())}`
  return [
    `CREATE TABLE ${part} (LIKE ${qualify(schema, table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION)`,
    `WITH moved AS (DELETE FROM ${fallback} WHERE ${range} RETURNING *) INSERT INTO ${part} SELECT * FROM moved`,
    `ALTER TABLE ${qualify(schema, table)} ATTACH PARTITION ${part} ${bounds(day)}`
  ]
}

/** Whether the DEFAULT partition holds rows of the day `$1` to `$2` (the day was made late). */
export const lateRows = (schema: string, table: string, key: string): string =>
  `SELECT 1 FROM ${qualify(schema, defaultPartition(table))} WHERE ${key} >= $1 AND ${key} < $2 LIMIT 1`

/** Drops a day's partition (retention: its rows are past it). */
export const dropDay = (schema: string, table: string, day: Date): string => `DROP TABLE IF EXISTS ${qualify(schema, dayPartition(table, day))}`

/** One batch of the DEFAULT partition's rows older than `$1`, `$2` the batch (normally there are none). */
export const deleteDefaultBefore = (schema: string, table: string, key: string): string => {
  const fallback = qualify(schema, defaultPartition(table))
  return `DELETE FROM ${fallback} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${fallback} WHERE ${key} < $1 LIMIT $2 FOR UPDATE SKIP LOCKED))`
}

/** A session advisory lock on `$1` (a name), taken only if free; `unlock` gives it back. */
export const tryLock = (): string => 'SELECT pg_try_advisory_lock(hashtext($1)) AS locked'
export const unlock = (): string => 'SELECT pg_advisory_unlock(hashtext($1))'
