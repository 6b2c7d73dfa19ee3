// Stripe webhooks into a Fastify service: verified with the `stripe` preset, keyed on Stripe's event id,
// handled by the typed router of ./stripe-handlers.ts.
// Run: REDIS_URL=redis://127.0.0.1:6379 STRIPE_WEBHOOK_SECRET=whsec_… node dist/examples/stripe.js
import Fastify, { type FastifyInstance } from 'fastify'
import { anvil, anvilWorker, type WebhookEvent } from '../index.js'
import { createStripeRouter, type Report } from './stripe-handlers.js'

export interface ExampleOptions {
  redisUrl: string
  /** The endpoint's signing secrets: while rolling a secret in the Stripe dashboard, list both. */
  secrets: string[]
  queueName?: string
  onEvent?: (event: WebhookEvent) => void | Promise<void>
  /** Where the typed handlers say what they did; default the app's log. */
  report?: Report
}

export async function buildStripeService ({ redisUrl, secrets, queueName, onEvent, report }: ExampleOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info' } })
  // POST /webhooks/stripe: Stripe-Signature checked (t=…,v1=…, 300 s tolerance), 202 {jobId, replayed}.
  await app.register(anvil, { redis: redisUrl, queueName, sources: [{ path: '/webhooks/stripe', provider: 'stripe', secrets }] })
  const router = createStripeRouter(report ?? ((fields) => app.log.info(fields, 'stripe')))
  if (onEvent !== undefined) router.onAny(onEvent)
  // The router is the worker's handler; handlers are added before the worker starts (it refuses them after).
  await app.register(anvilWorker, { redis: redisUrl, queueName, handler: router })
  return app
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const app = await buildStripeService({
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    secrets: (process.env.STRIPE_WEBHOOK_SECRET ?? '').split(',').filter(Boolean)
  })
  await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
}
