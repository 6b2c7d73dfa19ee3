/**
 * Paging, for every list a route or the CLI reads: a page of items and the cursor of the next one. Each route
 * family states its own largest page (src/paging/outbound-page-size.ts, src/event-log/event-queries.ts); the rule is here.
 */
import { encodeCursor, type CursorValue } from './cursor.js'
import type { Page } from './page-type.js'

export type { Page }

export const DEFAULT_PAGE_SIZE = 50

/** The size a page takes: the default when none is asked, else what was asked, from 1 to the family's `max`. */
export function pageSize (limit: number | undefined, max: number): number {
  return Math.min(Math.max(limit ?? DEFAULT_PAGE_SIZE, 1), max)
}

/** Rows fetched with `LIMIT limit + 1`: the extra row only says there is a next page. */
export function toPage<R, T> (rows: R[], limit: number, key: (row: R) => CursorValue[], map: (row: R) => T): Page<T> {
  const shown = rows.slice(0, limit)
  const last = shown.at(-1)
  return { items: shown.map(map), next: rows.length > limit && last !== undefined ? encodeCursor(key(last)) : null }
}
