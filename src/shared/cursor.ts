import { errors } from './errors.js'

/**
 * Opaque paging cursors: the sort key of the last item a page showed, as base64url JSON. A cursor that does
 * not decode to the expected shape is a 400, never a query.
 */
export type CursorValue = string | number

export function encodeCursor (values: readonly CursorValue[]): string {
  return Buffer.from(JSON.stringify(values), 'utf8').toString('base64url')
}

export function decodeCursor (cursor: string, kinds: ReadonlyArray<'string' | 'number'>): CursorValue[] {
  let values: unknown
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    values = undefined
  }
  if (!Array.isArray(values) || values.length !== kinds.length || values.some((value, i) => typeof value !== kinds[i])) {
    throw new errors.BAD_REQUEST('cursor: not a cursor this list gave out')
  }
  return values as CursorValue[]
}
