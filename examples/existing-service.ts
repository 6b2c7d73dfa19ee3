// An existing Fastify service that takes webhooks with Anvil and enqueues its own events.
// Run: REDIS_URL=redis://127.0.0.1:6379 WEBHOOK_SECRET=$(openssl rand -hex 32) node dist/examples/existing-service.js
import Fastify, { type FastifyInstance } from 'fastify'
import { anvil, anvilWorker, type WebhookEvent } from '../index.js'

export interface ServiceOptions {
  redisUrl: string
  webhookSecret: string
  /** Where handled events go; a real service would write to its database. */
  onEvent?: (event: WebhookEvent) => void | Promise<void>
}

export async function buildService ({ redisUrl, webhookSecret, onEvent }: ServiceOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info' } })

  // The service's own JSON routes are untouched by Anvil.
  app.post('/orders', async (request, reply) => {
    const order = request.body as { id: string }
    // The service's own events go through the same queue, retries and dead letters as webhooks.
    const { jobId, replayed } = await app.anvil.enqueue(order, { eventId: `order-${order.id}`, eventType: 'order.created' })
    return await reply.code(201).send({ order: order.id, jobId, replayed })
  })

  // POST /webhooks: verify, dedupe, enqueue, 202.
  await app.register(anvil, { redis: redisUrl, secret: webhookSecret })

  // The worker can run here or in its own process (`anvil worker --handler ./handler.js`).
  await app.register(anvilWorker, {
    redis: redisUrl,
    handler: async (event) => {
      app.log.info({ jobId: event.id, eventType: event.eventType, attempt: event.attempt }, 'handling event')
      await onEvent?.(event)
    }
  })
  return app
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const webhookSecret = process.env.WEBHOOK_SECRET
  if (webhookSecret === undefined) throw new Error('set WEBHOOK_SECRET: the secret your webhook sender signs with, 16 bytes or more')
  const app = await buildService({ redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', webhookSecret })
  await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
}
