import { NETWORK_ERROR_CODES } from '../shared/network-codes.js'

/**
 * What a failed query says about its cause, read from PostgreSQL's SQLSTATE (a pg DatabaseError's `code`) or
 * the driver's connection errors: the caller's data (class 22, a data exception: a value out of range, bad
 * syntax for its type, a character the encoding cannot hold), a database out of reach, a schema that lacks
 * a table, a column or itself (a migration was not run), or a transaction that lost a conflict and may be run again.
 */
export type DatabaseErrorKind = 'input' | 'unavailable' | 'unmigrated' | 'conflict'

/** PostgreSQL broke a conflict by failing this transaction: a serialization failure (40001) or a deadlock (40P01); the same work may simply run again. */
const CONFLICT_STATES = new Set(['40001', '40P01'])

/** Connection exceptions (08), too many connections (53), shut down or restarting (57P0x), gone (3D000), refused login (28), slow (57014). */
const UNAVAILABLE_STATES = /^(08|53|57P0|3D000$|28|57014$)/
/** Undefined table (42P01), column (42703) or schema (3F000). */
const UNMIGRATED_STATES = new Set(['42P01', '42703', '3F000'])
/** What pg says when a connection ends or never opens; it gives these no code. */
const DRIVER_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/

export function databaseErrorKind (err: unknown): DatabaseErrorKind | undefined {
  if (!(err instanceof Error)) return undefined
  const { code, severity } = err as { code?: unknown, severity?: unknown }
  if (typeof code === 'string' && typeof severity === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    if (code.startsWith('22')) return 'input'
    if (UNMIGRATED_STATES.has(code)) return 'unmigrated'
    if (CONFLICT_STATES.has(code)) return 'conflict'
    return UNAVAILABLE_STATES.test(code) ? 'unavailable' : undefined
  }
  if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return 'unavailable'
  if (err instanceof AggregateError && err.errors.some((one) => databaseErrorKind(one) === 'unavailable')) return 'unavailable'
  return DRIVER_MESSAGES.test(err.message) ? 'unavailable' : undefined
}
