/**
 * Statements prepared with SQL's PREPARE on a connection and run with EXECUTE inside a simple-protocol batch: a
 * cached plan that still travels in one round trip with the statements around it (BEGIN, SAVEPOINT, COMMIT),
 * which a protocol-level prepared statement in node-postgres cannot (it takes a round trip of its own). Values
 * go inlined as escaped literals. PREPARE outlives a rolled-back transaction, so a connection prepares each once.
 */
import pg from 'pg'

/** A statement to PREPARE: its name (unique per text), its parameters' types, its text with `$1`… */
export interface SessionStatement { name: string, types: readonly string[], text: string }

/** The names prepared on each connection (a new connection is a new client: it prepares again). */
const preparedOn = new WeakMap<object, Set<string>>()

/** A value as an SQL literal: NULL, a bytea's hex, a timestamp's ISO text, an array of text, else escaped text. */
export function sqlLiteral (value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (Buffer.isBuffer(value)) return `'\\x${value.toString('hex')}'`
  if (value instanceof Date) return `'${value.toISOString()}'`
  if (Array.isArray(value)) return `ARRAY[${value.map(sqlLiteral).join(', ')}]::text[]`
  return pg.escapeLiteral(String(value))
}

/** The SQL that runs `statement` with `values` on `client`, preparing it first when this connection has not. */
export function execute (client: object, statement: SessionStatement, values: readonly unknown[]): string {
  let names = preparedOn.get(client)
  if (names === undefined) preparedOn.set(client, names = new Set())
  const call = `EXECUTE ${statement.name}(${values.map(sqlLiteral).join(', ')})`
  if (names.has(statement.name)) return call
  names.add(statement.name)
  return `PREPARE ${statement.name}(${statement.types.join(', ')}) AS ${statement.text}; ${call}`
}

/**
 * After a batch failed on `client`: a PREPARE skipped because an earlier statement of its batch failed leaves its
 * name marked and not prepared (26000 next time), and one the mark lost is prepared twice (42P05). Either error
 * names the statement: the mark is set right, so one failed attempt heals it.
 */
export function notePrepareError (client: object, err: unknown): void {
  const { code, message } = (err ?? {}) as { code?: string, message?: string }
  const name = /prepared statement "([^"]+)"/.exec(message ?? '')?.[1]
  if (name === undefined) return
  if (code === '26000') preparedOn.get(client)?.delete(name)
  if (code === '42P05') preparedOn.get(client)?.add(name)
}
