import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { Type, type Static, type TObject } from '@sinclair/typebox'
import { createWorker, type AnvilWorker, type WebhookHandler } from '../src/worker/worker.js'
import { workerSettings } from '../src/worker/worker-options.js'
import { requireMigratedAtStart } from '../src/db/require-migrated.js'
import { DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import type { RedisInput } from '../src/redis/connect.js'
import { Opaque } from '../src/shared/schemas.js'
import { compileCheck, throwInvalid } from '../src/shared/validate.js'

/** `createWorker`'s options (src/worker/worker-options.ts) with the handler; the logger is the app's. */
const pluginProperties = {
  /** Called with each event; a throw (or a rejection) is a failed attempt. */
  handler: Opaque<WebhookHandler>(),
  /** A Redis URL (Anvil connects and closes) or an ioredis client with `maxRetriesPerRequest: null` (left open). @defaultValue `'redis://127.0.0.1:6379'` */
  redis: Type.Optional(Opaque<RedisInput>())
}

export const AnvilWorkerPluginOptionsSchema: TObject<typeof pluginProperties & typeof workerSettings> =
  Type.Object({ ...pluginProperties, ...workerSettings }, { additionalProperties: false })

export type AnvilWorkerPluginOptions = Static<typeof AnvilWorkerPluginOptionsSchema>

const checkOptions = compileCheck(AnvilWorkerPluginOptionsSchema)

declare module 'fastify' {
  interface FastifyInstance {
    anvilWorker: AnvilWorker
  }
}

/**
 * Runs a worker with the app: its journal's database checked for migrations at registration, started when the app is ready, closed (gracefully) on close. The start is not
 * awaited: with Redis away it would hold `ready` until Fastify's hook timeout and keep the host down.
 */
const anvilWorker: FastifyPluginAsync<AnvilWorkerPluginOptions> = async (app, options) => {
  throwInvalid(checkOptions(options))
  const { handler, redis = DEFAULT_REDIS_URL, ...rest } = options
  const worker = createWorker(handler, { ...rest, redis, logger: app.log })
  app.decorate('anvilWorker', worker)
  if (worker.journal !== undefined) {
    try {
      await requireMigratedAtStart(worker.journal.db, app.log, 'anvil worker')
    } catch (err) {
      await worker.close()
      throw err
    }
  }
  app.addHook('onReady', async () => {
    worker.start().catch((err: Error) => app.log.error({ err: err.message }, 'anvil worker: start failed'))
  })
  app.addHook('onClose', async () => await worker.close())
}

const plugin: FastifyPluginAsync<AnvilWorkerPluginOptions> = fp(anvilWorker, { name: '@anvil/fastify-worker', fastify: '5.x' })
export default plugin
