/** Reading the journal: a page of events, a count, one event with its effects, and a cursor to the next page. */
import type { Database } from '../db/database.js'
import { decodeCursor } from '../paging/cursor.js'
import { pageSize, toPage, type Page } from '../paging/page.js'
import { jsonView } from '../db/json-view.js'
import { errors } from '../shared/errors.js'
import type { ResolvedFilter } from './event-filter.js'
import type { EventItem } from './event-item.js'
import type { EventDetail } from './event-detail.js'

export type { EventItem }
export type { EventAttempt, EventDetail, EventEffect } from './event-detail.js'
import { deliveryDiff, previousDelivery } from './delivery-diff.js'
import * as webhookEffects from '../sql/webhook-effects.js'
import * as webhookEventAttempts from '../sql/webhook-event-attempts.js'
import * as webhookEvents from '../sql/webhook-events.js'
import type { DetailRow, ItemRow } from '../sql/webhook-events.js'
import type { WebhookEffectRow } from '../sql/webhook-effects.js'
import type { AttemptLogRow } from '../sql/webhook-event-attempts.js'

/** An event item is a few short columns read by one index range scan; the console asks for 500 at once. */
export const JOURNAL_MAX_PAGE = 500

/** The size of an event list's page (the journal's or the dead letters'). */
export const journalPageSize = (limit: number | undefined): number => pageSize(limit, JOURNAL_MAX_PAGE)

export type EventPage = Page<EventItem>

export function toItem (row: ItemRow): EventItem {
  const item: EventItem = {
    id: row.id,
    source: row.source,
    provider: row.provider,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    receivedAt: row.received_at.toISOString()
  }
  if (row.last_error !== null) item.lastError = row.last_error
  if (row.error_class !== null) item.errorClass = row.error_class
  return item
}


/** The list's statement and its values: newest first, `limit + 1` rows, after the cursor's row when there is one. */
/** The list's statement: a page of `limit` and one more, to tell whether another follows. */
export function listQuery (schema: string, filter: ResolvedFilter, page: { limit: number, cursor?: string }): webhookEvents.Plan {
  const before = page.cursor === undefined || page.cursor === '' ? undefined : decodeCursor(page.cursor, ['time', 'string'])
  return webhookEvents.list(schema, filter, page.limit + 1, before as [unknown, unknown] | undefined)
}

export async function listEvents (db: Database, filter: ResolvedFilter, page: { limit?: number, cursor?: string } = {}): Promise<EventPage> {
  const limit = journalPageSize(page.limit)
  const { text, values } = listQuery(db.schema, filter, { limit, cursor: page.cursor })
  const { rows } = await db.pool.query<ItemRow>(text, values)
  return toPage(rows, limit, (row) => [row.received_at_text, row.id], toItem)
}

/** How many events match the filter; with `replayable`, only those a replay may take. */
export async function countEvents (db: Database, filter: ResolvedFilter, { replayable = false } = {}): Promise<number> {
  const { text, values } = webhookEvents.count(db.schema, filter, replayable)
  const { rows } = await db.pool.query<{ n: string }>(text, values)
  return Number(rows[0]?.n ?? 0)
}

export async function getEvent (db: Database, id: string): Promise<EventDetail> {
  const { rows } = await db.pool.query<DetailRow>(webhookEvents.detail(db.schema), [id])
  const [row, before] = rows
  if (row === undefined) throw new errors.EVENT_NOT_FOUND(id)
  const effects = await db.pool.query<Omit<WebhookEffectRow, 'event_id'>>(webhookEffects.ofEvent(db.schema), [id])
  const attempts = await db.pool.query<AttemptLogRow>(webhookEventAttempts.attemptLog(db.schema), [id])
  const text = row.payload.toString('utf8')
  const utf8 = Buffer.from(text, 'utf8').equals(row.payload)
  const detail: EventDetail = {
    ...toItem(row),
    payload: utf8 ? text : row.payload.toString('base64'),
    payloadEncoding: utf8 ? 'utf8' : 'base64',
    contentType: row.content_type,
    headers: row.headers,
    signature: row.signature,
    requestId: row.request_id,
    jobId: row.job_id,
    processedAt: row.processed_at?.toISOString() ?? null,
    deliveries: row.deliveries,
    replays: row.replay_generation,
    effects: effects.rows.map((e) => ({ action: e.action, key: e.key, result: e.result, createdAt: e.created_at.toISOString() })),
    attemptLog: attempts.rows.map((a) => ({
      attempt: a.attempt,
      status: a.status,
      startedAt: a.started_at?.toISOString() ?? null,
      finishedAt: a.finished_at.toISOString(),
      errorClass: a.error_class,
      error: a.error,
      jobId: a.job_id
    }))
  }
  // The JSON view, built on read (the bytes are stored once); a body nested too deep to show has none.
  const json = utf8 ? jsonView(row.payload) : null
  if (json !== null) detail.json = JSON.parse(json)
  const previous = before === undefined ? row.previous_delivery : previousDelivery(before)
  const diff = previous === null ? undefined : deliveryDiff(previous, row)
  if (diff !== undefined) detail.previousDelivery = diff
  return detail
}
