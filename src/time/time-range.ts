/**
 * The times a caller may give (a filter, a `since`, a cursor): years 1 to 9999, what ISO 8601 writes with four
 * digits and what PostgreSQL's timestamptz and JavaScript's Date both hold. Year 0 or a duration reaching past
 * them is a clear 400, not a query that fails.
 */
export const EARLIEST_TIME_MS = Date.parse('0001-01-01T00:00:00Z')
export const LATEST_TIME_MS = Date.parse('9999-12-31T23:59:59.999Z')
export const TIME_RANGE_RULE = 'must fall within the years 1 to 9999'

/** True when `ms` is a time in that range (NaN is not). */
export function isTimeInRange (ms: number): boolean {
  return ms >= EARLIEST_TIME_MS && ms <= LATEST_TIME_MS
}

/** PostgreSQL's text form of a timestamptz (`2026-01-31 12:00:00.123456+00`), as a cursor holds it. */
const PG_TIME = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)([+-]\d{2})(:\d{2})?$/

/** True for a timestamp PostgreSQL wrote as text, within the range. */
export function isPgTime (text: string): boolean {
  const match = PG_TIME.exec(text)
  if (match === null) return false
  const ms = Date.parse(`${match[1] as string}T${(match[2] as string).slice(0, 12)}${match[3] as string}${match[4] ?? ':00'}`)
  return isTimeInRange(ms)
}
