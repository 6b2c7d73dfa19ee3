import { encodeCursor, type CursorValue } from '../shared/cursor.js'

export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 200

export interface Page<T> {
  items: T[]
  /** The cursor of the next page; null on the last one. */
  next: string | null
}

/** Rows fetched with `LIMIT limit + 1`: the extra row only says there is a next page. */
export function toPage<R, T> (rows: R[], limit: number, key: (row: R) => CursorValue[], map: (row: R) => T): Page<T> {
  const shown = rows.slice(0, limit)
  const last = shown.at(-1)
  return { items: shown.map(map), next: rows.length > limit && last !== undefined ? encodeCursor(key(last)) : null }
}

export function pageSize (limit: number | undefined): number {
  return Math.min(Math.max(limit ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE)
}

export const iso = (value: Date | null): string | null => value === null ? null : value.toISOString()
