import { errors } from '../shared/errors.js'
import { isPgTime } from '../time/time-range.js'

/**
 * Opaque paging cursors: the sort key of the last item a page showed, as base64url JSON. A cursor that does
 * not decode to the expected shape is a 400, never a query: a `number` is a whole number from 0 that a double
 * holds exactly (an id, an offset), a `time` PostgreSQL's text of a timestamptz.
 */
export type CursorValue = string | number
export type CursorKind = 'string' | 'number' | 'time'

const fits: Record<CursorKind, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string',
  number: (value) => Number.isSafeInteger(value) && (value as number) >= 0,
  time: (value) => typeof value === 'string' && isPgTime(value)
}

export function encodeCursor (values: readonly CursorValue[]): string {
  return Buffer.from(JSON.stringify(values), 'utf8').toString('base64url')
}

export function decodeCursor (cursor: string, kinds: readonly CursorKind[]): CursorValue[] {
  let values: unknown
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    values = undefined
  }
  if (!Array.isArray(values) || values.length !== kinds.length || values.some((value, i) => !fits[kinds[i] as CursorKind](value))) {
    throw new errors.BAD_REQUEST('cursor: not a cursor this list gave out')
  }
  return values as CursorValue[]
}
