import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { outboundInternals, type Outbound } from '../../src/outbox/outbound.js'
import {
  createDeliveryStats, DEFAULT_STATS_HOURS, EndpointStatsSchema, EndpointSummarySchema, MAX_STATS_ENDPOINTS, MAX_STATS_HOURS
} from '../../src/delivery-log/delivery-stats.js'
import { tenantView } from '../../src/portal/tenant-view.js'
import { errors } from '../../src/shared/errors.js'
import { IdParams } from './outbound-schemas.js'
import { PORTAL_READ, portalTenant } from './portal-access.js'

const tags = ['endpoints']

const Hours = {
  /** How far back, in hours. @defaultValue 24 */
  hours: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_STATS_HOURS }))
}

/**
 * Endpoints' delivery outcomes over a window: `GET /endpoint-stats?ids=` for a list (success rate and last
 * attempt of each), `GET /endpoints/:id/stats` for one endpoint's overview (outcomes over time, p50 latency).
 * A portal token reads its own tenant's endpoints only.
 */
export async function outboundStatsRoutes (admin: FastifyInstance, { outbound }: { outbound: Outbound }): Promise<void> {
  const stats = createDeliveryStats(outboundInternals(outbound).database)
  const view = tenantView(outbound)

  admin.get<{ Querystring: { ids: string, hours?: number } }>('/endpoint-stats', {
    config: PORTAL_READ,
    schema: {
      tags,
      summary: 'Each listed endpoint\'s successes, failures, success rate and last attempt over the window',
      querystring: Type.Object({
        /** Comma-separated endpoint ids, at most 200. */
        ids: Type.String({ minLength: 1, maxLength: MAX_STATS_ENDPOINTS * 201 }),
        ...Hours
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ items: Type.Array(EndpointSummarySchema) }) }
    }
  }, async (request) => {
    const ids = [...new Set(request.query.ids.split(',').filter((id) => id !== ''))]
    if (ids.length > MAX_STATS_ENDPOINTS) throw new errors.BAD_REQUEST(`ids: at most ${MAX_STATS_ENDPOINTS} endpoints`)
    return { items: await stats.summaries(ids, request.query.hours ?? DEFAULT_STATS_HOURS, portalTenant(request)) }
  })

  admin.get<{ Params: { id: string }, Querystring: { hours?: number } }>('/endpoints/:id/stats', {
    config: PORTAL_READ,
    schema: {
      tags,
      summary: 'One endpoint\'s attempts by outcome over time, its success rate and p50 latency',
      params: IdParams,
      querystring: Type.Object(Hours, { additionalProperties: false }),
      response: { 200: EndpointStatsSchema }
    }
  }, async (request) => {
    await view.endpoint(request.params.id, portalTenant(request))
    return await stats.endpoint(request.params.id, request.query.hours ?? DEFAULT_STATS_HOURS)
  })
}
