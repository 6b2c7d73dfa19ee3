import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeStep } from '../helpers/before-all.js'
import { outboundInternals } from '../../src/outbox/outbound.js'

const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const fixture = outboundFixture()
const { db } = fixture
let pool: pg.Pool
const app: FastifyInstance = Fastify()
let outbound: FastifyInstance['anvilOutbound']
beforeStep(t, async () => {
  pool = db.pool()
  await app.register(anvilOutbound, { database: pool, redis: fixture.redis.url, maxPayloadBytes: 1024 })
  await app.register(anvilAdmin, { token: TOKEN })
  await app.ready()
  outbound = app.anvilOutbound
})
t.teardown(async () => await app.close())

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
async function call (method: Method, url: string, payload?: unknown, headers: Record<string, string> = auth) {
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
}

const ROUTES: Array<[Method, string]> = [
  ['POST', '/admin/endpoints'], ['GET', '/admin/endpoints'], ['GET', '/admin/endpoints/ep_x'], ['PATCH', '/admin/endpoints/ep_x'],
  ['DELETE', '/admin/endpoints/ep_x'], ['POST', '/admin/endpoints/ep_x/rotate-secret'], ['POST', '/admin/endpoints/ep_x/test'],
  ['POST', '/admin/endpoints/ep_x/recover'], ['POST', '/admin/messages'], ['GET', '/admin/messages/m'], ['GET', '/admin/deliveries'],
  ['POST', '/admin/deliveries/1/retry'], ['GET', '/admin/undelivered']
]

t.test('every outbound admin route is 401 { error, code } without the token, and listed in the OpenAPI document', async (t) => {
  for (const [method, url] of ROUTES) {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }] as Array<Record<string, string>>) {
      const res = await call(method, url, method === 'GET' || method === 'DELETE' ? undefined : {}, headers)
      t.same(res, { status: 401, body: { error: 'Missing or wrong admin token', code: 'ANVIL_ERR_UNAUTHORIZED' } }, `${method} ${url}`)
    }
  }
  const doc = (await call('GET', '/admin/openapi.json')).body
  for (const path of ['/admin/endpoints', '/admin/endpoints/{id}', '/admin/endpoints/{id}/rotate-secret', '/admin/endpoints/{id}/test',
    '/admin/endpoints/{id}/recover', '/admin/messages', '/admin/messages/{id}', '/admin/deliveries', '/admin/deliveries/{id}/retry', '/admin/undelivered']) {
    t.ok(doc.paths[path], `${path} documented`)
  }
})

t.test('endpoints: create 201 with the secret, list with paging, get, patch, rotate, delete; bad input 4xx { error, code }', async (t) => {
  const created = await call('POST', '/admin/endpoints', { url: 'https://hooks.example/a', tenant: 'acme', eventTypes: ['order.paid'], description: 'A' })
  t.equal(created.status, 201)
  t.match(created.body, { id: /^ep_/, secret: /^whsec_/, url: 'https://hooks.example/a', tenant: 'acme', eventTypes: ['order.paid'], enabled: true, scheme: 'standard-webhooks', rateLimit: null })
  const id = created.body.id as string
  const second = await call('POST', '/admin/endpoints', { url: 'https://hooks.example/b', tenant: 'acme', scheme: 'stripe', rateLimit: 10 })
  t.equal(second.status, 201)

  for (const [payload, code, message] of [
    [{ url: 'ftp://x.example/' }, 'ANVIL_ERR_INVALID_ENDPOINT', /url must be http or https/],
    [{ url: 'https://u:p@x.example/' }, 'ANVIL_ERR_INVALID_ENDPOINT', /credentials/],
    [{ url: `https://x.example/${'a'.repeat(2100)}` }, 'ANVIL_ERR_BAD_REQUEST', /url/],
    [{ url: 'https://x.example/', eventTypes: ['has space'] }, 'ANVIL_ERR_BAD_REQUEST', /eventTypes\.0/],
    [{ url: 'https://x.example/', eventTypes: 'order.paid' }, 'ANVIL_ERR_BAD_REQUEST', /eventTypes/],
    [{ url: 'https://x.example/', scheme: 'svix' }, 'ANVIL_ERR_BAD_REQUEST', /scheme/],
    [{ url: 'https://x.example/', secret: 'whsec_mine' }, 'ANVIL_ERR_BAD_REQUEST', /secret|Unexpected property/],
    [{}, 'ANVIL_ERR_BAD_REQUEST', /url/]
  ] as const) {
    const res = await call('POST', '/admin/endpoints', payload)
    t.equal(res.status, 400, JSON.stringify(payload).slice(0, 80))
    t.match(res.body, { code, error: message })
  }

  const page1 = await call('GET', '/admin/endpoints?tenant=acme&limit=1')
  t.equal(page1.status, 200)
  t.equal(page1.body.items.length, 1)
  t.equal(page1.body.items[0].secret, undefined, 'no secret in a list')
  const page2 = await call('GET', `/admin/endpoints?tenant=acme&limit=1&cursor=${page1.body.next as string}`)
  t.same(page2.body.items.map((e: { id: string }) => e.id), [second.body.id])
  t.equal(page2.body.next, null)
  t.match(await call('GET', '/admin/endpoints?cursor=nonsense'), { status: 400, body: { code: 'ANVIL_ERR_BAD_REQUEST', error: /cursor/ } })
  t.match(await call('GET', '/admin/endpoints?limit=0'), { status: 400, body: { code: 'ANVIL_ERR_BAD_REQUEST', error: /limit/ } })
  t.match(await call('GET', '/admin/endpoints?colour=red'), { status: 400 })

  t.match(await call('GET', `/admin/endpoints/${id}`), { status: 200, body: { id, url: 'https://hooks.example/a' } })
  t.equal((await call('GET', `/admin/endpoints/${id}`)).body.secret, undefined)
  t.match(await call('GET', '/admin/endpoints/ep_missing'), { status: 404, body: { code: 'ANVIL_ERR_NOT_FOUND', error: /no endpoint ep_missing/ } })

  t.match(await call('PATCH', `/admin/endpoints/${id}`, { description: 'B', rateLimit: 3 }), { status: 200, body: { description: 'B', rateLimit: 3 } })
  t.match(await call('PATCH', `/admin/endpoints/${id}`, { rateLimit: null }), { status: 200, body: { rateLimit: null } })
  t.match(await call('PATCH', `/admin/endpoints/${id}`, {}), { status: 400, body: { code: 'ANVIL_ERR_BAD_REQUEST' } })
  t.match(await call('PATCH', `/admin/endpoints/${id}`, { url: 'gopher://x' }), { status: 400, body: { code: 'ANVIL_ERR_INVALID_ENDPOINT' } })
  t.match(await call('PATCH', '/admin/endpoints/ep_missing', { enabled: false }), { status: 404 })

  const rotated = await call('POST', `/admin/endpoints/${id}/rotate-secret`)
  t.equal(rotated.status, 200)
  t.match(rotated.body, { id, secret: /^whsec_/ })
  t.not(rotated.body.secret, created.body.secret)
  t.same(await outboundInternals(outbound).store.loadSecrets(id), [rotated.body.secret, created.body.secret], 'the old secret keeps signing')
  const noGrace = await call('POST', `/admin/endpoints/${id}/rotate-secret`, { graceSeconds: 0 })
  t.same(await outboundInternals(outbound).store.loadSecrets(id), [noGrace.body.secret])
  t.match(await call('POST', `/admin/endpoints/${id}/rotate-secret`, { graceSeconds: -1 }), { status: 400 })
  t.match(await call('POST', '/admin/endpoints/ep_missing/rotate-secret'), { status: 404 })

  t.equal((await call('DELETE', `/admin/endpoints/${second.body.id as string}`)).status, 204)
  t.match(await call('GET', `/admin/endpoints/${second.body.id as string}`), { status: 404 })
  t.match(await call('DELETE', `/admin/endpoints/${second.body.id as string}`), { status: 404, body: { code: 'ANVIL_ERR_NOT_FOUND' } })
})

t.test('messages: publish 202, oversized or bad input 4xx, look up with its deliveries', async (t) => {
  const endpoint = (await call('POST', '/admin/endpoints', { url: 'https://m.example/', tenant: 'msgs' })).body
  const published = await call('POST', '/admin/messages', { type: 'order.paid', data: { n: 1 }, tenant: 'msgs', id: 'admin-msg-1' })
  t.same(published, { status: 202, body: { messageId: 'admin-msg-1' } })
  t.match(await call('POST', '/admin/messages', { type: 'order.paid', data: 'x'.repeat(2000) }), { status: 413, body: { code: 'ANVIL_ERR_PAYLOAD_TOO_LARGE', error: /over the 1024-byte limit/ } })
  t.match(await call('POST', '/admin/messages', { type: 'order paid', data: 1 }), { status: 400, body: { code: 'ANVIL_ERR_BAD_REQUEST', error: /type/ } })
  t.match(await call('POST', '/admin/messages', { type: 'order.paid' }), { status: 400, body: { error: /data/ } })
  t.match(await call('POST', '/admin/messages', { type: 'order.paid', data: 1, id: 'a:b' }), { status: 400, body: { error: /id/ } })

  t.equal(await outbound.dispatcher.dispatchOnce(), 1)
  t.ok(await outboundInternals(outbound).queue.getJob(`admin-msg-1.${endpoint.id as string}`), 'dispatched to its endpoint')
  await outboundInternals(outbound).store.recordAttempt({ messageId: 'admin-msg-1', endpointId: endpoint.id, attempt: 1, httpStatus: 503, durationMs: 40, errorClass: 'HttpError', errorMessage: 'HTTP 503', responseHead: 'busy', payloadSha256: 'aa', success: false })
  const found = await call('GET', '/admin/messages/admin-msg-1')
  t.equal(found.status, 200)
  t.match(found.body, { id: 'admin-msg-1', type: 'order.paid', publicType: 'order.paid', tenant: 'msgs', data: { n: 1 }, status: 'dispatched', dispatchAttempts: 1, lastDispatchError: null })
  t.notOk('attempts' in found.body, 'the dispatch attempts are named apart from the deliveries\' attempt numbers')
  t.match(found.body.deliveries, [{ messageId: 'admin-msg-1', endpointId: endpoint.id, attempt: 1, status: 'failed', httpStatus: 503, durationMs: 40, error: 'HTTP 503' }])
  t.match(await call('GET', '/admin/messages/nope'), { status: 404, body: { code: 'ANVIL_ERR_NOT_FOUND' } })
})

t.test('messages: orderingKey on POST /admin/messages, in the OpenAPI document and the message\'s answer; a bad key is 400', async (t) => {
  const doc = (await call('GET', '/admin/openapi.json')).body
  t.match(doc.paths['/admin/messages'].post.requestBody.content['application/json'].schema.properties.orderingKey, { type: 'string' }, 'the request body documents orderingKey')
  const endpoint = (await call('POST', '/admin/endpoints', { url: 'https://k.example/', tenant: 'keyed' })).body
  t.same(await call('POST', '/admin/messages', { type: 'order.paid', data: { n: 1 }, tenant: 'keyed', id: 'keyed-1', orderingKey: 'order_1' }),
    { status: 202, body: { messageId: 'keyed-1' } })
  t.match((await call('GET', '/admin/messages/keyed-1')).body, { id: 'keyed-1', orderingKey: 'order_1' })
  t.notOk('orderingSeq' in (await call('GET', '/admin/messages/keyed-1')).body, 'its place in the key\'s order is the dispatcher\'s')
  t.notOk('orderingKey' in (await call('GET', '/admin/messages/admin-msg-1')).body, 'a message without a key has none')
  for (const orderingKey of ['', 'a\nb', 'k'.repeat(257)]) {
    t.match(await call('POST', '/admin/messages', { type: 'order.paid', data: 1, orderingKey }), { status: 400, body: { error: /orderingKey/ } }, JSON.stringify(orderingKey).slice(0, 20))
  }
  t.equal(await outbound.dispatcher.dispatchOnce(), 1)
  t.ok(await outboundInternals(outbound).queue.getJob(`keyed-1.${endpoint.id as string}`), 'the key\'s first message is its head: its job is added at once')
})

t.test('deliveries: filtered list, retry as a new job, the undelivered view, recover, a test event', async (t) => {
  const endpoint = (await call('POST', '/admin/endpoints', { url: 'https://d.example/', tenant: 'dlv' })).body
  const other = (await call('POST', '/admin/endpoints', { url: 'https://d2.example/', tenant: 'dlv' })).body
  const { messageId } = (await call('POST', '/admin/messages', { type: 'a.b', data: {}, tenant: 'dlv' })).body
  await outbound.dispatcher.dispatchOnce()
  const attempt = (endpointId: string, n: number, success: boolean) => outboundInternals(outbound).store.recordAttempt({
    messageId, endpointId, attempt: n, durationMs: 5, responseHead: '', payloadSha256: 'bb', success,
    ...(success ? { httpStatus: 200 } : { errorClass: 'TimeoutError', errorMessage: 'timed out after 10000 ms' })
  })
  const first = await attempt(endpoint.id, 1, false)
  await attempt(endpoint.id, 2, false)
  await attempt(other.id, 1, true)

  const failed = await call('GET', `/admin/deliveries?endpoint=${endpoint.id as string}&status=failed&since=2000-01-01T00:00:00Z&limit=1`)
  t.equal(failed.status, 200)
  t.same(Object.keys(failed.body), ['items', 'next'])
  t.match(failed.body.items, [{ id: /^\d+$/, messageId, endpointId: endpoint.id, attempt: 2, status: 'failed', httpStatus: null, durationMs: 5, error: 'timed out after 10000 ms' }])
  t.match(failed.body.items[0], { eventType: 'a.b', endpointUrl: 'https://d.example/' }, 'a row says what went where: the event\'s type and the endpoint\'s URL')
  const portal = (await call('POST', '/admin/portal/tokens', { tenant: 'dlv' })).body.token as string
  const ofTenant = await app.inject({ method: 'GET', url: `/admin/deliveries?endpoint=${other.id as string}`, headers: { authorization: `Bearer ${portal}` } })
  t.match(ofTenant.json().items, [{ endpointId: other.id, eventType: 'a.b', endpointUrl: 'https://d2.example/' }], 'and in a tenant\'s view')
  const rest = await call('GET', `/admin/deliveries?endpoint=${endpoint.id as string}&status=failed&limit=1&cursor=${failed.body.next as string}`)
  t.match(rest.body, { items: [{ id: first.deliveryId, attempt: 1 }], next: null })
  t.same((await call('GET', `/admin/deliveries?endpoint=${endpoint.id as string}&since=2999-01-01T00:00:00Z`)).body, { items: [], next: null })
  t.match(await call('GET', '/admin/deliveries?status=lost'), { status: 400, body: { code: 'ANVIL_ERR_BAD_REQUEST', error: /status/ } })
  t.match(await call('GET', '/admin/deliveries?since=yesterday'), { status: 400, body: { error: /since: must be an ISO 8601 date-time/ } })

  const undelivered = await call('GET', `/admin/undelivered?endpoint=${endpoint.id as string}`)
  t.match(undelivered.body, { items: [{ messageId, endpointId: endpoint.id, type: 'a.b', attempts: 2, lastError: 'timed out after 10000 ms' }], next: null })
  t.same((await call('GET', `/admin/undelivered?endpoint=${other.id as string}`)).body, { items: [], next: null }, 'a success is delivered')

  const retried = await call('POST', `/admin/deliveries/${first.deliveryId}/retry`)
  t.equal(retried.status, 202)
  t.match(retried.body, { messageId, endpointId: endpoint.id, jobId: new RegExp(`^${messageId}\\.${endpoint.id as string}\\.retry-[0-9a-f]+$`), alreadyQueued: false })
  const job = await outboundInternals(outbound).queue.getJob(retried.body.jobId)
  t.match(job?.data, { messageId, endpointId: endpoint.id, url: 'https://d.example/', eventType: 'a.b' })
  t.same(await call('POST', `/admin/deliveries/${first.deliveryId}/retry`), { status: 200, body: { ...retried.body, alreadyQueued: true } },
    'while it waits, a second retry is answered with it')
  await job?.remove()
  const again = await call('POST', `/admin/deliveries/${first.deliveryId}/retry`)
  t.match(again, { status: 202, body: { alreadyQueued: false } }, 'once it is gone, a retry is a new job')
  t.not(again.body.jobId, retried.body.jobId)
  t.match(await call('POST', '/admin/deliveries/999999/retry'), { status: 404, body: { code: 'ANVIL_ERR_NOT_FOUND' } })
  t.match(await call('POST', '/admin/deliveries/abc/retry'), { status: 404 })

  const recovered = await call('POST', `/admin/endpoints/${endpoint.id as string}/recover`, { since: '2000-01-01T00:00:00Z' })
  t.same(recovered, { status: 202, body: { messageIds: [messageId] } })
  t.same((await call('POST', `/admin/endpoints/${other.id as string}/recover`, { since: '2000-01-01T00:00:00Z' })).body, { messageIds: [] })
  t.match(await call('POST', `/admin/endpoints/${endpoint.id as string}/recover`, { since: 'last week' }), { status: 400 })
  t.match(await call('POST', `/admin/endpoints/${endpoint.id as string}/recover`, {}), { status: 400, body: { error: /since/ } })
  t.match(await call('POST', '/admin/endpoints/ep_missing/recover', { since: '2000-01-01T00:00:00Z' }), { status: 404 })

  const test = await call('POST', `/admin/endpoints/${endpoint.id as string}/test`)
  t.equal(test.status, 202)
  const testJob = await outboundInternals(outbound).queue.getJob(`${test.body.messageId as string}.${endpoint.id as string}`)
  t.match(JSON.parse(String(testJob?.data.body)), { id: test.body.messageId, type: 'anvil.test', data: { test: true } })
  t.match(await call('GET', `/admin/messages/${test.body.messageId as string}`), { status: 200, body: { type: 'anvil.test', status: 'dispatched' } })
  t.match(await call('POST', `/admin/endpoints/${endpoint.id as string}/test`, { type: 'bad type' }), { status: 400 })
  t.match(await call('POST', '/admin/endpoints/ep_missing/test'), { status: 404 })
})

t.test('app.anvil.publish in the caller\'s transaction; the pool given is left open when the app closes', async (t) => {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const { messageId } = await app.anvil.publish({ type: 'x.y', data: 1 }, { client })
    await client.query('ROLLBACK')
    t.same(await db.query('SELECT 1 FROM anvil.outbox WHERE id = $1', [messageId]), [])
  } finally {
    client.release()
  }
  const other = Fastify()
  await other.register(anvilOutbound, { database: pool, redis: fixture.redis.url, runDispatcher: true, migrate: true })
  await other.ready()
  const { messageId } = await other.anvil.publish({ type: 'x.y', data: 2 })
  t.match(await db.query('SELECT id FROM anvil.outbox WHERE id = $1', [messageId]), [{ id: messageId }])
  await other.close()
  t.same((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }])
  const bad = Fastify()
  await t.rejects(async () => { await bad.register(anvilOutbound, { database: pool, redis: fixture.redis.url, dispatch: { batchSize: 0 } }).ready() },
    { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /outbound dispatch.batchSize/ })
  await bad.close()
})

t.test('metrics: messages published, and the outbox\'s pending count and oldest age on scrape; health and metrics beside outbound alone', async (t) => {
  const { default: anvilMetrics } = await import('../../plugins/metrics/metrics.js')
  const { default: anvilHealth } = await import('../../plugins/health.js')
  const metered = Fastify()
  await metered.register(anvilOutbound, { database: pool, redis: fixture.redis.url, queueName: 'metered' })
  await metered.register(anvilMetrics)
  t.teardown(async () => await metered.close())
  await metered.anvil.publish({ type: 'metered.event', data: 1, tenant: 'metered' })
  await metered.anvil.publish({ type: 'metered.event', data: 2, tenant: 'metered' })
  await db.query("INSERT INTO anvil.outbox (id, type, public_type, data, created_at) VALUES ('metered-old', 'a', 'a', '1', now() - interval '1 hour')")
  const text = (await metered.inject({ url: '/metrics' })).body
  t.match(text, /anvil_outbound_published_total\{event_type="metered.event"\} 2/)
  const pending = Number(/^anvil_outbox_pending (\d+)/m.exec(text)?.[1])
  t.ok(pending >= 3, `pending ${pending}`)
  const oldest = Number(/^anvil_outbox_oldest_pending_seconds ([\d.]+)/m.exec(text)?.[1])
  t.ok(oldest >= 3600, `oldest ${oldest}`)
  t.match(text, /^anvil_outbox_failed \d+/m)
  t.notMatch(text, /anvil_queue_jobs\{/, 'no inbound queue to sample')
  const healthOnly = Fastify()
  await healthOnly.register(anvilOutbound, { database: pool, redis: fixture.redis.url })
  await healthOnly.register(anvilHealth)
  await t.rejects(async () => { await healthOnly.ready() }, { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /health needs `redis`, or the anvil plugin/ })
  await healthOnly.close()
})

t.test('app.anvil carries publish beside the ingress\'s enqueue, whichever plugin is registered first; a second of either fails', async (t) => {
  const { default: anvil } = await import('../../plugins/ingress.js')
  const ingressOptions = { redis: fixture.redis.url, secret: 'whsec_0123456789abcdef0123' }
  for (const order of [['ingress', 'outbound'], ['outbound', 'ingress']]) {
    const both = Fastify()
    for (const name of order) {
      if (name === 'ingress') await both.register(anvil, ingressOptions)
      else await both.register(anvilOutbound, { database: pool, redis: fixture.redis.url })
    }
    await both.ready()
    t.equal(typeof both.anvil.publish, 'function', `${order.join(' then ')}: publish`)
    t.equal(typeof both.anvil.enqueue, 'function', `${order.join(' then ')}: enqueue`)
    t.ok(await both.anvil.ping(1000))
    await both.close()
  }
  const twice = Fastify()
  t.teardown(async () => await twice.close())
  await twice.register(anvilOutbound, { database: pool, redis: fixture.redis.url })
  await t.rejects(async () => { await twice.register(anvilOutbound, { database: pool, redis: fixture.redis.url }) }, { code: 'FST_ERR_DEC_ALREADY_PRESENT' })
})

t.test('anvil serve\'s admin API serves the outbound routes when ANVIL_DATABASE_URL is set, and only then', async (t) => {
  const { default: pino } = await import('pino')
  const { registerAdmin } = await import('../../cli/admin-server.js')
  const { loadServeConfig } = await import('../../cli/config/load-config.js')
  const { createApp } = await import('../../cli/server.js')
  const log = pino({ level: 'silent' })
  const env = { WEBHOOK_SECRET: 'whsec_cli_admin_0123456789', REDIS_URL: fixture.redis.url, ANVIL_ADMIN_TOKEN: TOKEN }
  const withDb = createApp(log)
  await registerAdmin(withDb, loadServeConfig({ ...env, ANVIL_DATABASE_URL: db.url }), log)
  const created = await withDb.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload: { url: 'https://serve.example/' } })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { id: /^ep_/, secret: /^whsec_/ })
  t.equal((await withDb.inject({ url: '/admin/endpoints' })).statusCode, 401)
  await withDb.close()
  const withoutDb = createApp(log)
  await registerAdmin(withoutDb, loadServeConfig(env), log)
  t.equal((await withoutDb.inject({ url: '/admin/endpoints', headers: auth })).statusCode, 404, 'no database, no outbound routes')
  await withoutDb.close()
})
