/**
 * Outgoing webhooks as a TypeScript user meets them, through the package's own name: the plugin's options,
 * `app.anvil.publish`, `app.anvilOutbound` and `createOutbound`.
 */
import Fastify from 'fastify'
import pg from 'pg'
import { Type } from '@sinclair/typebox'
import {
  anvilAdmin, anvilOutbound, createOutbound, defineEventTypes, type AnvilOutboundOptions, type Endpoint, type EndpointWithSecret, type Outbound,
  type PublishResult
} from '@anvil/fastify'
import { expectType } from './assert.js'

const app = Fastify()
const pool = new pg.Pool()

await app.register(anvilOutbound, {
  database: pool,
  redis: 'redis://127.0.0.1:6379',
  schema: 'anvil',
  prefix: '{anvil}',
  queueName: 'outbound',
  maxPayloadBytes: 65536,
  eventMap: { 'internal.paid': 'order.paid' },
  httpsOnly: true,
  secretGraceSeconds: 3600,
  secretCacheMs: 1000,
  dispatch: { pollIntervalMs: 1000, leaseMs: 30000, batchSize: 50, retryBaseMs: 1000, retryMaxMs: 60000, attempts: 8 },
  runDispatcher: true,
  migrate: true
})
await app.register(anvilOutbound, { database: 'postgres://localhost/app' })
// @ts-expect-error the database is required
await app.register(anvilOutbound, { redis: 'redis://127.0.0.1:6379' })
// @ts-expect-error an unknown dispatch option
await app.register(anvilOutbound, { database: pool, dispatch: { leaseSeconds: 30 } })
await app.register(anvilAdmin, { token: 'a-token-of-16-chars-or-more' })
expectType<boolean | undefined>()(({} as AnvilOutboundOptions).httpsOnly)

expectType<Promise<PublishResult>>()(app.anvil.publish({ type: 'order.paid', data: { id: 1 }, tenant: 't', id: 'm1' }))
const client = await pool.connect()
expectType<Promise<PublishResult>>()(app.anvil.publish({ type: 'order.paid', data: null }, { client }))
// @ts-expect-error data is required
void app.anvil.publish({ type: 'order.paid' })
expectType<Outbound>()(app.anvilOutbound)
expectType<Promise<EndpointWithSecret>>()(app.anvilOutbound.endpoints.create({ url: 'https://example.com/hook', eventTypes: ['order.paid'] }))
expectType<Promise<Endpoint>>()(app.anvilOutbound.endpoints.update('ep_1', { rateLimit: null }))

const outbound = createOutbound({ database: pool, redis: 'redis://127.0.0.1:6379' })
expectType<Promise<{ messageIds: string[] }>>()(outbound.resend.recover('ep_1', '2026-01-01T00:00:00Z'))
// The service's pool, queue and delivery store are Anvil's own, not API.
// @ts-expect-error not on the public service
void outbound.store
// @ts-expect-error not on the public service
void outbound.queue
// @ts-expect-error not on the public service
void outbound.database

// The event-type catalog in code: publish typed by it, a wrong field or an unknown type a compile error.
const catalog = defineEventTypes({ 'invoice.paid': Type.Object({ amount: Type.Integer(), currency: Type.String() }) })
await app.register(anvilOutbound, { database: pool, eventTypes: catalog, strict: true })
const publishTyped = catalog.typed(app.anvil.publish)
expectType<Promise<PublishResult>>()(publishTyped({ type: 'invoice.paid', data: { amount: 100, currency: 'eur' } }))
// @ts-expect-error amount is a number
await publishTyped({ type: 'invoice.paid', data: { amount: '100', currency: 'eur' } })
// @ts-expect-error a type the catalog does not hold
await publishTyped({ type: 'invoice.voided', data: { amount: 100, currency: 'eur' } })
