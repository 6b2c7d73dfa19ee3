/**
 * Outgoing webhooks in a Fastify app: `app.anvil.publish(...)` and `app.anvilOutbound` (endpoints, the
 * delivery log). Register it before `anvilAdmin` and the admin API gets the outbound routes.
 */
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { Type, type Static, type TObject } from '@sinclair/typebox'
import { migrate } from '../src/db/migrate.js'
import { requireMigratedAtStart } from '../src/db/require-migrated.js'
import { createOutbound, outboundInternals, type Outbound } from '../src/outbox/outbound.js'
import { OutboundOptionsSchema } from '../src/outbox/outbound-options.js'
import type { AnvilDecorator } from './ingress.js'
import { compileCheck, throwInvalid } from '../src/shared/validate.js'

const { logger: _logger, ...serviceProperties } = OutboundOptionsSchema.properties

const pluginProperties = {
  /** Dispatch the outbox from this process (LISTEN plus poll) and prune it (`retentionDays`); `anvil worker` does both otherwise. @defaultValue false */
  runDispatcher: Type.Optional(Type.Boolean()),
  /**
   * Apply the SQL migrations when the plugin starts (`anvil migrate` does it otherwise). Without it the start
   * fails with `ANVIL_ERR_NOT_MIGRATED` when the database lacks one. @defaultValue false
   */
  migrate: Type.Optional(Type.Boolean())
}

export const AnvilOutboundOptionsSchema: TObject<Omit<typeof OutboundOptionsSchema.properties, 'logger'> & typeof pluginProperties> =
  Type.Object({ ...serviceProperties, ...pluginProperties }, { additionalProperties: false })

export type AnvilOutboundOptions = Static<typeof AnvilOutboundOptionsSchema>

const checkOptions = compileCheck(AnvilOutboundOptionsSchema)

declare module 'fastify' {
  interface FastifyInstance {
    anvilOutbound: Outbound
  }
}

const anvilOutbound: FastifyPluginAsync<AnvilOutboundOptions> = async (app, options) => {
  throwInvalid(checkOptions(options), 'outbound ')
  const { runDispatcher = false, migrate: applyMigrations = false, ...serviceOptions } = options
  const outbound = createOutbound({ ...serviceOptions, logger: app.log })
  try {
    const { database } = outboundInternals(outbound)
    if (applyMigrations) await migrate(database)
    else await requireMigratedAtStart(database, app.log, 'anvil outbound')
    app.decorate('anvilOutbound', outbound)
    const publish = outbound.publish
    // The ingress plugin may have made `app.anvil` already: join it (a second outbound still fails).
    if (app.hasDecorator('anvil') && !('publish' in app.anvil)) Object.assign(app.anvil, { publish })
    // Typed with every member; the ingress ones are there when the ingress plugin is registered.
    else app.decorate('anvil', { publish } as AnvilDecorator)
  } catch (err) {
    await outbound.close()
    throw err
  }
  if (runDispatcher) {
    app.addHook('onReady', async () => {
      outbound.dispatcher.start().catch((err: Error) => app.log.error({ err: err.message }, 'anvil outbound: dispatcher start failed'))
      outbound.startRetention()
    })
  }
  app.addHook('onClose', async () => await outbound.close())
}

const plugin: FastifyPluginAsync<AnvilOutboundOptions> = fp(anvilOutbound, { name: '@anvil/fastify-outbound', fastify: '5.x' })
export default plugin
