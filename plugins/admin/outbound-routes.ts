import type { FastifyPluginAsync } from 'fastify'
import type { Outbound } from '../../src/outbox/outbound.js'
import { outboundEndpointRoutes } from './outbound-endpoint-routes.js'
import { outboundEventTypeRoutes } from './outbound-event-type-routes.js'
import { outboundMessageRoutes } from './outbound-message-routes.js'
import { outboundOperationalRoutes } from './outbound-operational-routes.js'
import { outboundStatsRoutes } from './outbound-stats-routes.js'

/** The outgoing-webhook admin routes of a service, as a route set for `anvilAdmin`'s scope. */
export function outboundAdminRoutes (outbound: Outbound): FastifyPluginAsync {
  return async function outboundRoutes (admin) {
    await admin.register(outboundEndpointRoutes, { outbound })
    await admin.register(outboundMessageRoutes, { outbound })
    await admin.register(outboundEventTypeRoutes, { outbound })
    await admin.register(outboundOperationalRoutes, { outbound })
    await admin.register(outboundStatsRoutes, { outbound })
  }
}
