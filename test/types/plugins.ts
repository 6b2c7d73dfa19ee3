/**
 * The plugins' options as a TypeScript user meets them, through the package's own name (the built
 * declarations in dist/, as installed): what must compile, and what must not (`@ts-expect-error`).
 * Checked by `npm run test:types` (part of `npm test`, after the build).
 */
import Fastify from 'fastify'
import { Registry } from 'prom-client'
import { Redis } from 'ioredis'
import anvil, {
  anvilAdmin, anvilHealth, anvilMetrics, anvilWorker, type AnvilHealthOptions, type AnvilMetricsOptions, type AnvilPluginOptions,
  type AnvilWorkerPluginOptions, type EnqueueResult, type IngressOptions, type SourceOptions, type WebhookEvent
} from '@anvil/fastify'
import { expectType } from './assert.js'

const app = Fastify()

// anvil: every documented option, each with the type of its schema.
await app.register(anvil, {
  redis: 'redis://127.0.0.1:6379',
  secret: 'whsec_0123456789abcdef',
  path: '/hooks',
  bodyLimit: 1024,
  queueName: 'orders',
  prefix: '{orders}',
  dedupeWindowMs: 60_000,
  retrySchedule: [1000, 5000],
  retention: { completedCount: 10, deadAgeSeconds: 0 },
  idempotency: (input) => input.eventId,
  enqueueTimeoutMs: 500,
  retryAfterSeconds: 2,
  replication: { replicas: 1, timeoutMs: 100 },
  allowShortSecrets: false,
  connectTimeoutMs: 0
})
await app.register(anvil, { redis: new Redis(), sources: [{ path: '/stripe', provider: 'stripe', secrets: ['whsec_0123456789abcdef'], tolerance: 600 }] })
// @ts-expect-error an unknown option
await app.register(anvil, { secret: 'whsec_0123456789abcdef', bodylimit: 1024 })
// @ts-expect-error bodyLimit is a number of bytes
await app.register(anvil, { secret: 'whsec_0123456789abcdef', bodyLimit: '1mb' })
// @ts-expect-error a provider that has no preset
await app.register(anvil, { sources: [{ path: '/mail', provider: 'mailchimp', secrets: ['whsec_0123456789abcdef'] }] })
// @ts-expect-error `secrets` is a list
await app.register(anvil, { sources: [{ path: '/s', provider: 'stripe', secret: 'whsec_0123456789abcdef' }] })
// @ts-expect-error redis is a URL or a client
await app.register(anvil, { secret: 'whsec_0123456789abcdef', redis: 6379 })
// @ts-expect-error idempotency is a strategy
await app.register(anvil, { secret: 'whsec_0123456789abcdef', idempotency: 'sha256' })

expectType<string | undefined>()(({} as AnvilPluginOptions).secret)
expectType<number | undefined>()(({} as AnvilPluginOptions).connectTimeoutMs)
expectType<SourceOptions[] | undefined>()(({} as IngressOptions).sources)
expectType<'anvil' | 'stripe' | 'github' | 'shopify' | 'slack' | 'twilio' | 'standard-webhooks' | 'paddle' | 'linear' | 'square' | 'zoom' | 'gitlab' | 'discord' | 'sendgrid' | undefined>()(({} as SourceOptions).provider)

// The decorator.
expectType<Promise<EnqueueResult>>()(app.anvil.enqueue({ id: 1 }, { eventId: 'evt_1' }))
expectType<Promise<boolean>>()(app.anvil.ping(500))
// @ts-expect-error enqueue's options are its own
void app.anvil.enqueue({ id: 1 }, { eventID: 'evt_1' })

// anvilWorker
await app.register(anvilWorker, {
  handler: async (event) => { expectType<WebhookEvent>()(event) },
  redis: 'redis://127.0.0.1:6379',
  queueName: 'orders',
  concurrency: 4,
  shutdownTimeoutMs: 1000,
  sweepIntervalMs: 0,
  deadAgeSeconds: 0,
  lockDurationMs: 1000,
  stalledIntervalMs: 500,
  maxStalledCount: 1
})
// @ts-expect-error the handler is required
await app.register(anvilWorker, { concurrency: 4 })
// @ts-expect-error an unknown option
await app.register(anvilWorker, { handler: () => {}, concurency: 4 })
// @ts-expect-error the logger is the app's
await app.register(anvilWorker, { handler: () => {}, logger: console })
// @ts-expect-error a handler takes a WebhookEvent
await app.register(anvilWorker, { handler: (event: string) => event })
expectType<number | undefined>()(({} as AnvilWorkerPluginOptions).concurrency)
expectType<boolean>()(app.anvilWorker.running)

// anvilHealth
await app.register(anvilHealth, { prefix: '/_health', timeoutMs: 500, redis: 'redis://127.0.0.1:6379', worker: app.anvilWorker })
await app.register(anvilHealth)
// @ts-expect-error timeoutMs, not timeout
await app.register(anvilHealth, { timeout: 500 })
// @ts-expect-error a number of milliseconds
await app.register(anvilHealth, { timeoutMs: '1s' })
expectType<number | undefined>()(({} as AnvilHealthOptions).timeoutMs)

// anvilMetrics
await app.register(anvilMetrics, { registry: new Registry(), path: false, processMetrics: false })
await app.register(anvilMetrics, { path: '/internal/metrics', queue: { redis: 'redis://127.0.0.1:6379', queueName: 'orders', timeoutMs: 500 } })
await app.register(anvilMetrics, { queue: false })
// @ts-expect-error path is a route or false
await app.register(anvilMetrics, { path: true })
// @ts-expect-error an unknown option
await app.register(anvilMetrics, { processMetric: true })
// @ts-expect-error the queue's redis is a URL or a client
await app.register(anvilMetrics, { queue: { redis: 6379 } })
expectType<string | false | undefined>()(({} as AnvilMetricsOptions).path)
expectType<Registry>()(app.anvilMetrics.registry)

// anvilAdmin
await app.register(anvilAdmin, { token: 'a-token-of-16-chars-or-more', prefix: '/ops' })
// @ts-expect-error the token is required
await app.register(anvilAdmin, { prefix: '/ops' })
