/**
 * The operator's operational endpoints (`/admin/operational-endpoints`): endpoints like any other (signed,
 * guarded, retried, logged), which receive only Anvil's operational events, of every tenant.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { Database } from '../db/database.js'
import { decodeCursor } from '../paging/cursor.js'
import { errors } from '../shared/errors.js'
import { toPage, type Page } from '../paging/page.js'
import { compileCheck } from '../shared/validate.js'
import * as sql from '../sql/endpoints.js'
import type { EndpointRow } from '../sql/endpoints.js'
import { MAX_ENDPOINT_URL_LENGTH } from './endpoint-url.js'
import type { Endpoint, EndpointWithSecret } from './endpoint-schemas.js'
import { toEndpoint, type EndpointStore } from './endpoint-store.js'
import { OPERATIONAL_EVENT_TYPES } from './operational-events.js'
import { outboundPageSize } from '../paging/outbound-page-size.js'

export const OperationalEndpointInputSchema = Type.Object({
  url: Type.String({ minLength: 1, maxLength: MAX_ENDPOINT_URL_LENGTH }),
  /** The operational event types it receives. @defaultValue `[]` (all five) */
  eventTypes: Type.Optional(Type.Array(Type.Union(OPERATIONAL_EVENT_TYPES.map((type) => Type.Literal(type))), {
    maxItems: OPERATIONAL_EVENT_TYPES.length, errorMessage: `must list operational event types: ${OPERATIONAL_EVENT_TYPES.join(', ')}`
  })),
  /** @defaultValue `''` */
  description: Type.Optional(Type.String({ maxLength: 1000 }))
}, { additionalProperties: false })
export type OperationalEndpointInput = Static<typeof OperationalEndpointInputSchema>

const checkInput = compileCheck(OperationalEndpointInputSchema)

/** The operator's endpoints for Anvil's operational events: endpoints of the store, marked `operational`. */
export interface OperationalEndpoints {
  create (input: OperationalEndpointInput): Promise<EndpointWithSecret>
  list (query?: { limit?: number, cursor?: string }): Promise<Page<Endpoint>>
  remove (id: string): Promise<void>
}

export function createOperationalEndpoints (db: Database, endpoints: Pick<EndpointStore, 'create' | 'remove'>): OperationalEndpoints {
  return {
    async create (input: OperationalEndpointInput): Promise<EndpointWithSecret> {
      const problem = checkInput(input)
      if (problem !== undefined) throw new errors.INVALID_ENDPOINT(problem)
      return await endpoints.create({ url: input.url, eventTypes: [...new Set(input.eventTypes ?? [])], description: input.description ?? '' }, { operational: true })
    },

    async list (query: { limit?: number, cursor?: string } = {}): Promise<Page<Endpoint>> {
      const limit = outboundPageSize(query.limit)
      const after = query.cursor === undefined ? null : decodeCursor(query.cursor, ['string'])[0]
      const { rows } = await db.pool.query<EndpointRow>(sql.listOperational(db.schema), [after, limit + 1])
      return toPage(rows, limit, (row) => [row.id], toEndpoint)
    },

    async remove (id: string): Promise<void> {
      const { rowCount } = await db.pool.query(sql.removeOperational(db.schema), [id])
      if (rowCount === 0) throw new errors.NOT_FOUND(`no operational endpoint ${id}`)
    }
  }
}
