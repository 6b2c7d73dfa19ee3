import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { createWorker, type AnvilWorker, type WebhookHandler, type WorkerOptions } from '../src/worker/worker.js'
import { DEFAULT_REDIS_URL } from '../src/inbound/ingress-options.js'

export interface AnvilWorkerPluginOptions extends Omit<WorkerOptions, 'redis' | 'logger'> {
  handler: WebhookHandler
  redis?: WorkerOptions['redis']
}

declare module 'fastify' {
  interface FastifyInstance {
    anvilWorker: AnvilWorker
  }
}

/**
 * Runs a worker with the app: started when the app is ready, closed (gracefully) on close. The start is not
 * awaited: with Redis away it would hold `ready` until Fastify's hook timeout and keep the host down.
 */
const anvilWorker: FastifyPluginAsync<AnvilWorkerPluginOptions> = async (app, options) => {
  const { handler, redis = DEFAULT_REDIS_URL, ...rest } = options
  const worker = createWorker(handler, { ...rest, redis, logger: app.log })
  app.decorate('anvilWorker', worker)
  app.addHook('onReady', async () => {
    worker.start().catch((err: Error) => app.log.error({ err: err.message }, 'anvil worker: start failed'))
  })
  app.addHook('onClose', async () => await worker.close())
}

export default fp(anvilWorker, { name: '@anvil/fastify-worker', fastify: '5.x' })
