import type { FastifyPluginAsync } from 'fastify'
import type { Logger } from 'pino'
import type { Database } from '../src/db/database.js'
import { createOutbound } from '../src/outbox/outbound.js'
import { outboundAdminRoutes } from '../plugins/admin/outbound-routes.js'
import type { Telemetry } from '../src/queue/telemetry.js'

/**
 * `anvil serve`'s outgoing-webhook admin routes (an entry of ADMIN_FEATURES, typed by shape so this file does
 * not import admin-server.ts back), on when ANVIL_DATABASE_URL is set. The service shares the admin API's pool
 * (left open: the server closes it) and its Redis.
 */
export function outboundAdminFeature (context: {
  database?: Database, redis: string, prefix?: string, outboundRetrySchedule?: number[], telemetry?: Telemetry, encryptionKey?: string, log: Logger
}): FastifyPluginAsync | undefined {
  const { database, redis, prefix, outboundRetrySchedule, telemetry, encryptionKey, log } = context
  if (database === undefined) return undefined
  return async function outboundFeature (admin) {
    const outbound = createOutbound({
      database: database.pool, schema: database.schema, redis, ...(prefix === undefined ? {} : { prefix }),
      ...(outboundRetrySchedule === undefined ? {} : { retrySchedule: outboundRetrySchedule }), ...(telemetry === undefined ? {} : { telemetry }), logger: log,
      ...(encryptionKey === undefined ? {} : { encryptionKey })
    })
    admin.addHook('onClose', async () => await outbound.close())
    // The admin API's erasure routes take their outgoing side from here: this outbound is not anvilAdmin's option.
    if (admin.hasDecorator('anvilErasure')) admin.anvilErasure.outbound = outbound
    await admin.register(outboundAdminRoutes(outbound))
  }
}
