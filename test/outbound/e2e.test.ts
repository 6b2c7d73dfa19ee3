/**
 * The whole outgoing path on real PostgreSQL, Redis and HTTP: publish in a transaction → two dispatchers →
 * two delivery workers → a receiver on loopback, then the delivery log and the admin API's view of it.
 */
import t from 'tap'
import Fastify from 'fastify'
import { Webhook } from 'standardwebhooks'
import { inTransaction } from '../../src/db/database.js'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import type { Outbound } from '../../src/outbox/outbound.js'
import anvilAdmin from '../../plugins/admin/admin.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const SCHEDULE = [30, 30]
let failing = true
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  res.statusCode = req.url === '/flaky' && failing ? 500 : 204
  res.end()
}), async (receiver) => await receiver.close())

function workerFor (outbound: Outbound) {
  const worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, queueName: 'e2e', allowNets: '127.0.0.0/8', jitter: 0 })
  t.teardown(async () => await worker.close())
  return worker
}

const a = beforeAll(t, async () => fixture.open({ queueName: 'e2e', retrySchedule: SCHEDULE, dispatch: { pollIntervalMs: 100 } }))
const b = beforeAll(t, async () => fixture.open({ queueName: 'e2e', retrySchedule: SCHEDULE, dispatch: { pollIntervalMs: 100 } }))
const workers = beforeAll(t, async () => [workerFor(a), workerFor(b)])

t.test('two dispatchers and two workers: every message reaches every endpoint once, signed, and is logged', async (t) => {
  const endpoints = await Promise.all(['/1', '/2', '/3'].map(async (path) => await a.endpoints.create({ url: receiver.url + path, tenant: 'e2e' })))
  await Promise.all([a.dispatcher.start(), b.dispatcher.start(), ...workers.map(async (w) => await w.start())])
  const pool = db.pool()
  const ids: string[] = []
  for (let i = 0; i < 20; i++) {
    ids.push(await inTransaction(pool, async (client) => (await (i % 2 === 0 ? a : b).publish({ type: 'order.paid', data: { i }, tenant: 'e2e' }, { client })).messageId))
  }
  await receiver.waitFor(60)
  await eventually('(db.query("SELECT 1 FROM anvil.deliveries WHERE status = \'success\'"))…', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE status = 'success'")).length >= 60)
  const pairs = receiver.received.map((r) => `${String(r.headers['webhook-id'])} ${r.url}`)
  t.equal(new Set(pairs).size, 60, 'no pair delivered twice')
  t.same(new Set(receiver.received.map((r) => r.headers['webhook-id'])), new Set(ids))
  for (const request of receiver.received.slice(0, 6)) {
    const endpoint = endpoints.find((e) => e.url.endsWith(request.url))
    const verified = new Webhook(endpoint?.secret ?? '').verify(request.body, request.headers as Record<string, string>)
    t.match(verified, { type: 'order.paid', data: { i: Number } }, 'verified by the standardwebhooks package')
  }
  const logged = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM anvil.deliveries WHERE status = 'success' AND attempt = 1")
  t.same(logged, [{ n: 60 }])
  for (const endpoint of endpoints) t.match(await a.endpoints.get(endpoint.id), { lastDeliveryStatus: 'success', lastDeliveryAt: String })
})

t.test('a failing endpoint: retried on the schedule, listed as undelivered, recovered through the admin API', async (t) => {
  const flaky = await a.endpoints.create({ url: receiver.url + '/flaky', tenant: 'flaky' })
  const { messageId } = await a.publish({ type: 'order.paid', data: {}, tenant: 'flaky' })
  // A row is written `started` before its POST: wait for the third to be answered, not only written.
  await eventually('three answered attempts', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status <> 'started'", [messageId])).length === 3)
  const app = Fastify()
  await app.register(anvilAdmin, { token: 'admin-token-0123456789', outbound: a })
  t.teardown(async () => await app.close())
  const headers = { authorization: 'Bearer admin-token-0123456789' }
  const undelivered = (await app.inject({ url: '/admin/undelivered', headers })).json()
  t.match(undelivered.items, [{ messageId, endpointId: flaky.id, attempts: 3 }])
  const message = (await app.inject({ url: `/admin/messages/${messageId}`, headers })).json()
  t.same(message.deliveries.map((d: { attempt: number, status: string, httpStatus: number }) => [d.attempt, d.status, d.httpStatus]),
    [[1, 'failed', 500], [2, 'failed', 500], [3, 'failed', 500]], 'the first try and two retries, each logged')
  failing = false
  const recovered = await app.inject({ method: 'POST', url: `/admin/endpoints/${flaky.id}/recover`, headers, payload: { since: new Date(0).toISOString() } })
  t.same(recovered.json(), { messageIds: [messageId] })
  await eventually('(db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND s…', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status = 'success'", [messageId])).length === 1)
  t.same((await app.inject({ url: '/admin/undelivered', headers })).json(), { items: [], next: null })
})
