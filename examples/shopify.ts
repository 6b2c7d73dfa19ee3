// Shopify webhooks into a Fastify service: X-Shopify-Hmac-Sha256 (base64) verified with the app's client
// secret, keyed on X-Shopify-Event-Id, handled by X-Shopify-Topic.
// Run: REDIS_URL=redis://127.0.0.1:6379 SHOPIFY_API_SECRET=… node dist/examples/shopify.js
import Fastify, { type FastifyInstance } from 'fastify'
import { anvil, anvilWorker } from '../index.js'
import type { ExampleOptions } from './stripe.js'

export async function buildShopifyService ({ redisUrl, secrets, queueName, onEvent }: ExampleOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info' } })
  await app.register(anvil, { redis: redisUrl, queueName, sources: [{ path: '/webhooks/shopify', provider: 'shopify', secrets }] })
  await app.register(anvilWorker, {
    redis: redisUrl,
    queueName,
    handler: async (event) => {
      if (event.eventType === 'orders/create') {
        const order = event.json<{ id: number, total_price: string }>()
        app.log.info({ order: order.id, shop: event.headers['x-shopify-shop-domain'] }, 'new order')
      }
      await onEvent?.(event)
    }
  })
  return app
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const app = await buildShopifyService({
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    secrets: (process.env.SHOPIFY_API_SECRET ?? '').split(',').filter(Boolean)
  })
  await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
}
