import type { Database } from '../db/database.js'
import { decodeCursor } from '../paging/cursor.js'
import { errors } from '../shared/errors.js'
import * as sql from '../sql/deliveries.js'
import type { DeliveryRow } from '../sql/deliveries.js'
import * as outboxSql from '../sql/outbox.js'
import type { OutboxRow } from '../sql/outbox.js'
import { MessageShape, toDelivery, toDeliveryDetail, type Delivery, type DeliveryListRow, type MessageWithDeliveries, type Undelivered } from './delivery-schemas.js'
import { toPage, type Page } from '../paging/page.js'
import { outboundPageSize } from '../paging/outbound-page-size.js'

export interface DeliveryQuery {
  endpoint?: string
  /** Only deliveries to this tenant's endpoints (a portal token's view). */
  tenant?: string
  status?: Delivery['status']
  /** ISO time: attempts at or after it. */
  since?: string
  limit?: number
  cursor?: string
}

export interface UndeliveredQuery {
  endpoint?: string
  limit?: number
  cursor?: string
}

export { toDelivery }

/** Reads of the delivery log and the outbox for the admin API, newest first, with cursor paging. */
export interface DeliveryLog {
  list (query?: DeliveryQuery): Promise<Page<Delivery>>
  get (id: string): Promise<Delivery>
  message (id: string): Promise<MessageWithDeliveries>
  /** Message and endpoint pairs with attempts and no success, the latest attempt first. */
  undelivered (query?: UndeliveredQuery): Promise<Page<Undelivered>>
  /**
   * The messages an endpoint failed since a time and has not succeeded with since: what `recover` re-sends.
   * Only those still in the outbox (retention may have taken a message whose late attempts are still logged).
   */
  failedSince (endpointId: string, since: string): Promise<string[]>
}

export function createDeliveryLog (db: Database): DeliveryLog {
  return {
    async list (query: DeliveryQuery = {}): Promise<Page<Delivery>> {
      const limit = outboundPageSize(query.limit)
      const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ['number'])[0]
      const params = [query.endpoint ?? null, query.status ?? null, query.since ?? null, before ?? null, limit + 1]
      const { rows } = query.tenant === undefined
        ? await db.pool.query<DeliveryListRow>(sql.list(db.schema), params)
        : await db.pool.query<DeliveryListRow>(sql.listOfTenant(db.schema), [...params, query.tenant])
      return toPage(rows, limit, (row) => [Number(row.id)], toDelivery)
    },

    async get (id: string): Promise<Delivery> {
      const { rows } = /^[0-9]{1,18}$/.test(id) ? await db.pool.query<DeliveryRow>(sql.byId(db.schema), [id]) : { rows: [] }
      if (rows[0] === undefined) throw new errors.NOT_FOUND(`no delivery ${id}`)
      return toDelivery(rows[0])
    },

    async message (id: string): Promise<MessageWithDeliveries> {
      const { rows } = await db.pool.query<OutboxRow>(outboxSql.byId(db.schema), [id])
      const row = rows[0]
      if (row === undefined) throw new errors.NOT_FOUND(`no message ${id}`)
      const attempts = await db.pool.query<DeliveryRow>(sql.ofMessage(db.schema), [id])
      return { ...MessageShape.from(row), data: JSON.parse(row.data), deliveries: attempts.rows.map(toDeliveryDetail) }
    },

    async undelivered (query: UndeliveredQuery = {}): Promise<Page<Undelivered>> {
      const limit = outboundPageSize(query.limit)
      const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ['number'])[0]
      const { rows } = await db.pool.query<{
        last_id: string, message_id: string, endpoint_id: string, type: string | null, attempts: number,
        last_attempt_at: Date, last_http_status: number | null, last_error: string | null
      }>(sql.undelivered(db.schema), [query.endpoint ?? null, before ?? null, limit + 1])
      return toPage(rows, limit, (row) => [Number(row.last_id)], (row) => ({
        messageId: row.message_id,
        endpointId: row.endpoint_id,
        type: row.type,
        attempts: row.attempts,
        lastAttemptAt: row.last_attempt_at.toISOString(),
        lastHttpStatus: row.last_http_status,
        lastError: row.last_error
      }))
    },

    async failedSince (endpointId: string, since: string): Promise<string[]> {
      const { rows } = await db.pool.query<{ message_id: string }>(sql.failedSince(db.schema), [endpointId, since])
      return rows.map((row) => row.message_id)
    }
  }
}
