/**
 * Operational webhooks end to end: an operator's operational endpoint (`/admin/operational-endpoints`) receives
 * `endpoint.disabled`, `endpoint.failing`, `endpoint.recovered`, `message.exhausted` and `inbound.dead_lettered`,
 * signed as Standard Webhooks with the secret the API returned (verified by the receiver), through the outbox and
 * two delivery workers; one message per transition; an operational endpoint that fails reports nothing about
 * itself; a tenant's endpoint takes its own tenant's `endpoint.*` events by name. Real PostgreSQL, Redis and HTTP.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Webhook } from 'standardwebhooks'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { createWorker } from '../../src/worker/worker.js'
import { migrate } from '../../src/db/migrate.js'
import { createOutbound, type Outbound, outboundInternals } from '../../src/outbox/outbound.js'

import { addJob, jobData, openQueue } from '../helpers/journal.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeStep } from '../helpers/before-all.js'
import { startReceiver, type Receiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const CONSOLE = 'https://anvil.example.com/admin/console/'
const PORTAL = 'https://hooks.example.com/admin/portal/'
const SCHEDULE = [100, 100, 100, 100, 100]
let db: TestDatabase
let redis: TestRedis
let receiver: Receiver
let app: FastifyInstance
let outbound: Outbound
let opsId = ''
let opsDownId = ''
let opsGoneId = ''

interface Seen { path: string, type: string, data: Record<string, unknown>, id: string }
const secrets = new Map<string, string>()
const seen: Seen[] = []
const unverified: string[] = []
let flaky = true

beforeStep(t, async () => {
  [db, redis] = await Promise.all([TestDatabase.create(), TestRedis.start()])
  t.teardown(async () => await Promise.all([db.drop(), redis.stop()]))
  await migrate(db.url)
  receiver = await startReceiver((req, res) => {
    const path = req.url
    const secret = secrets.get(path)
    if (secret !== undefined) {
      try {
        const event = new Webhook(secret).verify(req.body, req.headers as Record<string, string>) as { type: string, data: Record<string, unknown> }
        seen.push({ path, type: event.type, data: event.data, id: String(req.headers['webhook-id']) })
      } catch (err) {
        unverified.push(`${path}: ${(err as Error).message}`)
      }
    }
    res.statusCode = path === '/gone' || path === '/ops-gone' ? 410
      : path === '/down' || path === '/ops-down' ? 500
        : path === '/flaky' && flaky ? 503 : 204
    res.end()
  })
  t.teardown(async () => await receiver.close())

  app = Fastify()
  await app.register(anvilOutbound, {
    database: db.pool(), redis: redis.url, runDispatcher: true, consoleUrl: CONSOLE, portalUrl: PORTAL, retrySchedule: SCHEDULE, dispatch: { pollIntervalMs: 100 }
  })
  await app.register(anvilAdmin, { token: TOKEN })
  await app.ready()
  t.teardown(async () => await app.close())
  outbound = app.anvilOutbound
  for (let i = 0; i < 2; i++) {
    const worker = createDeliveryWorker({
      redis: redis.url, store: outboundInternals(outbound).store, allowNets: '127.0.0.0/8', jitter: 0, circuit: { failureThreshold: 3, openMs: 300 }
    })
    t.teardown(async () => await worker.close())
    await worker.start()
  }
  opsId = await operationalEndpoint('/ops')
  opsDownId = await operationalEndpoint('/ops-down')
  opsGoneId = await operationalEndpoint('/ops-gone', ['endpoint.disabled', 'endpoint.failing'])
})

async function call (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = auth) {
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
}

/** An operational endpoint made through the API, whose deliveries the receiver verifies with the secret it returned. */
async function operationalEndpoint (path: string, eventTypes?: string[]): Promise<string> {
  const created = await call('POST', '/admin/operational-endpoints', { url: `${receiver.url}${path}`, ...(eventTypes === undefined ? {} : { eventTypes }) })
  if (created.status !== 201) throw new Error(`operational endpoint ${path}: ${created.status} ${JSON.stringify(created.body)}`)
  secrets.set(path, created.body.secret)
  return created.body.id
}

/** The operational messages in the outbox, about an endpoint (or an inbound event), by type. */
async function written (field: 'endpointId' | 'eventId', value: string): Promise<Record<string, number>> {
  const rows = await db.query<{ type: string, n: number }>(
    `SELECT type, count(*)::int AS n FROM anvil.outbox WHERE operational AND (data::jsonb) ->> $1 = $2 GROUP BY type`, [field, value])
  return Object.fromEntries(rows.map((row) => [row.type, row.n]))
}
const received = (type: string, field: string, value: string, path = '/ops'): Seen[] =>
  seen.filter((s) => s.path === path && s.type === type && s.data[field] === value)
const successes = async (endpointId: string): Promise<number> =>
  (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM anvil.deliveries WHERE endpoint_id = $1 AND status = 'success'", [endpointId]))[0]?.n ?? 0

t.test('the admin API: 201 { id, secret }, listed apart from the endpoints, deleted; bad types 400; the token only', async (t) => {
  const list = await call('GET', '/admin/operational-endpoints')
  t.equal(list.status, 200)
  t.same(list.body.items.map((e: { id: string }) => e.id).sort(), [opsId, opsDownId, opsGoneId].sort())
  t.notMatch(JSON.stringify(list.body), /whsec_/, 'no secret in the list')
  const endpoints = (await call('GET', '/admin/endpoints')).body.items as Array<{ id: string }>
  t.notOk(endpoints.some((e) => [opsId, opsDownId, opsGoneId].includes(e.id)), 'not among the endpoints messages fan out to')
  const bad = await call('POST', '/admin/operational-endpoints', { url: `${receiver.url}/x`, eventTypes: ['order.paid'] })
  t.equal(bad.status, 400)
  t.match(bad.body, { code: String, error: /eventTypes/ })
  t.match(await call('POST', '/admin/operational-endpoints', { url: 'ftp://x' }), { status: 400, body: { code: 'ANVIL_ERR_INVALID_ENDPOINT' } })
  t.match(await call('POST', '/admin/operational-endpoints', { url: `${receiver.url}/x` }, {}), { status: 401, body: { code: 'ANVIL_ERR_UNAUTHORIZED' } })
  const extra = await call('POST', '/admin/operational-endpoints', { url: `${receiver.url}/extra` })
  t.match(extra.body, { id: /^ep_/, secret: /^whsec_/ })
  t.equal((await call('DELETE', `/admin/operational-endpoints/${String(extra.body.id)}`)).status, 204)
  t.match(await call('DELETE', `/admin/operational-endpoints/${String(extra.body.id)}`), { status: 404, body: { code: 'ANVIL_ERR_NOT_FOUND' } })
  const plain = await outbound.endpoints.create({ url: `${receiver.url}/plain`, tenant: 'plain', eventTypes: ['nothing.sent'] })
  t.match(await call('DELETE', `/admin/operational-endpoints/${plain.id}`), { status: 404 }, 'an ordinary endpoint is not deleted here')
  t.ok(await outbound.endpoints.get(plain.id))
  const doc = (await call('GET', '/admin/openapi.json')).body
  t.ok(doc.paths['/admin/operational-endpoints'], 'documented in the OpenAPI document')
})

t.test('a 410: endpoint.disabled once, naming the endpoint, with the reason, the tenant and a link: the operator\'s into the console, the tenant\'s into the portal', async (t) => {
  const gone = await outbound.endpoints.create({ url: `${receiver.url}/gone`, tenant: 'gone', description: 'Order sync for the warehouse' })
  const sibling = await outbound.endpoints.create({ url: `${receiver.url}/tenant-gone`, tenant: 'gone', eventTypes: ['endpoint.disabled'] })
  const everything = await outbound.endpoints.create({ url: `${receiver.url}/tenant-gone-all`, tenant: 'gone' })
  const stranger = await outbound.endpoints.create({ url: `${receiver.url}/tenant-other`, tenant: 'other', eventTypes: ['endpoint.disabled'] })
  secrets.set('/tenant-gone', sibling.secret)
  secrets.set('/tenant-gone-all', everything.secret)
  secrets.set('/tenant-other', stranger.secret)
  await Promise.all([1, 2, 3, 4].map(async (i) => await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'gone' })))
  await eventually('received(\'endpoint.disabled\', \'endpointId\', gone.id).length === 1', async () => received('endpoint.disabled', 'endpointId', gone.id).length === 1, 20_000)
  t.match(received('endpoint.disabled', 'endpointId', gone.id)[0]?.data, {
    endpointId: gone.id, endpointUrl: `${receiver.url}/gone`, endpointDescription: 'Order sync for the warehouse', tenant: 'gone',
    reason: 'the endpoint answered 410 Gone', disabledAt: String, link: `${CONSOLE}#/endpoints/${gone.id}`
  }, 'the operator\'s: the endpoint named, the link into the console, absolute')
  t.notOk('portalLink' in (received('endpoint.disabled', 'endpointId', gone.id)[0]?.data ?? {}), 'one link')
  await eventually('received(\'endpoint.disabled\', \'endpointId\', gone.id, \'/te…', async () => received('endpoint.disabled', 'endpointId', gone.id, '/tenant-gone').length === 1, 20_000)
  const tenants = received('endpoint.disabled', 'endpointId', gone.id, '/tenant-gone')[0]?.data
  t.match(tenants, { endpointId: gone.id, endpointUrl: `${receiver.url}/gone`, endpointDescription: 'Order sync for the warehouse', link: `${PORTAL}#/endpoints/${gone.id}` },
    'the tenant\'s: the same endpoint, the link into the portal, absolute')
  t.notMatch(JSON.stringify(tenants), /admin\/console/, 'nothing of the operator\'s console')
  t.same(await written('endpointId', gone.id), { 'endpoint.disabled': 1 }, 'one message for four 410s over two workers')
  t.equal(seen.filter((s) => s.path === '/tenant-gone-all' && s.type.startsWith('endpoint.')).length, 0, 'a tenant endpoint taking every type takes no operational event')
  t.equal(seen.filter((s) => s.path === '/tenant-other').length, 0, "another tenant's endpoint hears nothing of it")
  t.same(unverified, [], 'every delivery verified')
})

t.test("a portal user subscribes one of their endpoints to their own tenant's endpoint.* events; the operational routes are 403", async (t) => {
  const minted = await call('POST', '/admin/portal/tokens', { tenant: 'portal-t' })
  t.equal(minted.status, 201)
  const portal = { authorization: `Bearer ${String(minted.body.token)}` }
  const sub = await call('POST', '/admin/endpoints', { url: `${receiver.url}/portal-sub`, eventTypes: ['endpoint.disabled', 'endpoint.failing', 'endpoint.recovered'] }, portal)
  t.equal(sub.status, 201)
  t.match(sub.body, { tenant: 'portal-t', eventTypes: ['endpoint.disabled', 'endpoint.failing', 'endpoint.recovered'], secret: /^whsec_/ })
  secrets.set('/portal-sub', sub.body.secret)
  for (const [method, url] of [['POST', '/admin/operational-endpoints'], ['GET', '/admin/operational-endpoints'], ['DELETE', `/admin/operational-endpoints/${opsId}`]] as const) {
    t.match(await call(method, url, method === 'POST' ? { url: `${receiver.url}/mine` } : undefined, portal), { status: 403, body: { code: 'ANVIL_ERR_FORBIDDEN' } }, `${method} ${url}`)
  }
  // A sibling of the portal tenant that answers 410, and one of another tenant.
  const gone = await outbound.endpoints.create({ url: `${receiver.url}/gone`, tenant: 'portal-t' })
  const elsewhere = await outbound.endpoints.create({ url: `${receiver.url}/gone`, tenant: 'portal-other' })
  await outbound.publish({ type: 'order.paid', data: {}, tenant: 'portal-t' })
  await outbound.publish({ type: 'order.paid', data: {}, tenant: 'portal-other' })
  await eventually('received(\'endpoint.disabled\', \'endpointId\', gone.id, \'/po…', async () => received('endpoint.disabled', 'endpointId', gone.id, '/portal-sub').length === 1, 20_000)
  t.match(received('endpoint.disabled', 'endpointId', gone.id, '/portal-sub')[0]?.data, {
    tenant: 'portal-t', reason: 'the endpoint answered 410 Gone', endpointUrl: `${receiver.url}/gone`, link: `${PORTAL}#/endpoints/${gone.id}`
  }, 'its link opens the endpoint in the portal')
  await eventually('received(\'endpoint.disabled\', \'endpointId\', elsewhere.id)…', async () => received('endpoint.disabled', 'endpointId', elsewhere.id).length === 1, 20_000)
  t.equal(seen.filter((s) => s.path === '/portal-sub' && s.data.endpointId !== gone.id).length, 0, "nothing of another tenant's, and no order.paid")
  t.same(unverified, [])
})

t.test('auto-disable (only failures for disableAfterMs): endpoint.disabled with that reason', async (t) => {
  // A queue of its own, whose worker disables after 1 ms of failures; the test event goes straight to it.
  const auto = createOutbound({ database: db.url, redis: redis.url, queueName: 'auto', retrySchedule: [50, 50, 50] })
  t.teardown(async () => await auto.close())
  const worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(auto).store, queueName: 'auto', allowNets: '127.0.0.0/8', jitter: 0, circuit: false, disableAfterMs: 1 })
  t.teardown(async () => await worker.close())
  await worker.start()
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/down`, tenant: 'auto' })
  await auto.resend.sendTest(endpoint.id)
  await eventually('received(\'endpoint.disabled\', \'endpointId\', endpoint.id).…', async () => received('endpoint.disabled', 'endpointId', endpoint.id).length === 1, 20_000)
  const data = received('endpoint.disabled', 'endpointId', endpoint.id)[0]?.data ?? {}
  t.match(data, { tenant: 'auto', reason: /^only failures since \d{4}-/, endpointUrl: `${receiver.url}/down` }, 'the reason')
  t.notOk('link' in data || 'portalLink' in data, 'without consoleUrl and portalUrl: no link, never a path alone')
  t.same(await written('endpointId', endpoint.id), { 'endpoint.disabled': 1 })
})

t.test('a failing receiver: endpoint.failing when its circuit opens, endpoint.recovered after, one each over two workers', async (t) => {
  flaky = true
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/flaky`, tenant: 'flaky' })
  for (let i = 0; i < 4; i++) await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'flaky' })
  await eventually('received(\'endpoint.failing\', \'endpointId\', endpoint.id).length === 1', async () => received('endpoint.failing', 'endpointId', endpoint.id).length === 1, 20_000)
  t.match(received('endpoint.failing', 'endpointId', endpoint.id)[0]?.data, {
    endpointId: endpoint.id, endpointUrl: `${receiver.url}/flaky`, endpointDescription: '', tenant: 'flaky', circuitOpenedAt: String, failingSince: String,
    lastAttempt: { httpStatus: 503, errorClass: 'http_5xx' }, link: `${CONSOLE}#/endpoints/${endpoint.id}`
  })
  flaky = false
  await eventually('successes(endpoint.id) === 4', async () => await successes(endpoint.id) === 4, 30_000)
  await eventually('received(\'endpoint.recovered\', \'endpointId\', endpoint.id)…', async () => received('endpoint.recovered', 'endpointId', endpoint.id).length === 1, 20_000)
  t.match(received('endpoint.recovered', 'endpointId', endpoint.id)[0]?.data, { endpointId: endpoint.id, endpointUrl: `${receiver.url}/flaky`, tenant: 'flaky', circuitOpenedAt: String, recoveredAt: String, link: `${CONSOLE}#/endpoints/${endpoint.id}` })
  t.same(await written('endpointId', endpoint.id), { 'endpoint.failing': 1, 'endpoint.recovered': 1 }, 'one per transition, probes that failed included')
  const [failing, recovered] = [received('endpoint.failing', 'endpointId', endpoint.id)[0], received('endpoint.recovered', 'endpointId', endpoint.id)[0]]
  t.ok(seen.indexOf(failing as Seen) < seen.indexOf(recovered as Seen), 'failing, then recovered')
})

t.test("a message's attempts run out: message.exhausted with the message, the endpoint and a link to the message", async (t) => {
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/down`, tenant: 'down' })
  const { messageId } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'down' })
  await eventually('received(\'message.exhausted\', \'messageId\', messageId).length === 1', async () => received('message.exhausted', 'messageId', messageId).length === 1, 30_000)
  t.match(received('message.exhausted', 'messageId', messageId)[0]?.data, {
    messageId, endpointId: endpoint.id, endpointUrl: `${receiver.url}/down`, endpointDescription: '', tenant: 'down', eventType: 'order.paid', attempts: SCHEDULE.length + 1,
    lastAttempt: { httpStatus: 500, errorClass: 'http_5xx' }, link: `${CONSOLE}#/messages/${messageId}`
  })
  t.same(await written('endpointId', endpoint.id), { 'endpoint.failing': 1, 'message.exhausted': 1 })
  t.equal(seen.filter((s) => s.path === '/ops-gone' && s.type === 'message.exhausted').length, 0, 'an endpoint subscribed to other types does not get it')
})

t.test('a last attempt that stalled (its worker died): message.exhausted once, with the stall; none for an operational delivery', async (t) => {
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/stalled`, tenant: 'stalled' })
  const job = { messageId: 'msg_stalled', endpointId: endpoint.id, jobId: `msg_stalled.${endpoint.id}`, attempt: 6, payloadSha256: 'x', stalls: 1, since: new Date(0) }
  await outboundInternals(outbound).store.startAttempt(job)
  t.same(await outboundInternals(outbound).store.resumeAttempt({ ...job, exhausted: { eventType: 'order.paid', operational: false } }), { stalled: true, delivered: false })
  t.same(await outboundInternals(outbound).store.resumeAttempt({ ...job, exhausted: { eventType: 'order.paid', operational: false } }), { stalled: false, delivered: false }, 'the same stall, seen again')
  t.same(await written('endpointId', endpoint.id), { 'message.exhausted': 1 })
  await eventually('received(\'message.exhausted\', \'messageId\', \'msg_stalled\').length === 1', async () => received('message.exhausted', 'messageId', 'msg_stalled').length === 1, 20_000)
  t.match(received('message.exhausted', 'messageId', 'msg_stalled')[0]?.data, { endpointId: endpoint.id, tenant: 'stalled', attempts: 6, lastAttempt: { errorClass: 'stalled' } })
  const opJob = { ...job, messageId: 'msg_stalled_op', jobId: `msg_stalled_op.${endpoint.id}` }
  await outboundInternals(outbound).store.startAttempt(opJob)
  await outboundInternals(outbound).store.resumeAttempt({ ...opJob, exhausted: { eventType: 'endpoint.failing', operational: true } })
  t.same(await written('endpointId', endpoint.id), { 'message.exhausted': 1 }, 'an operational delivery that stalled out reports nothing')
})

t.test('an inbound event that fails its attempts: inbound.dead_lettered once, also when the sweep comes again', async (t) => {
  const queue = openQueue(redis.url, 'ops-inbound')
  t.teardown(async () => await queue.close())
  const worker = createWorker(async () => { throw new Error('handler says no') }, {
    redis: redis.url, queueName: 'ops-inbound', journal: { database: db.url }, consoleUrl: CONSOLE, sweepIntervalMs: 0
  })
  t.teardown(async () => await worker.close())
  await worker.start()
  const data = jobData({ eventId: 'evt_dead_1', retry: [20, 20] })
  const jobId = await addJob(queue, data)
  await eventually('received(\'inbound.dead_lettered\', \'eventId\', \'evt_dead_1\').length ===…', async () => received('inbound.dead_lettered', 'eventId', 'evt_dead_1').length === 1, 20_000)
  t.match(received('inbound.dead_lettered', 'eventId', 'evt_dead_1')[0]?.data, {
    eventId: 'evt_dead_1', deadLetterId: `d_${jobId}`, jobId, source: 'stripe', provider: 'stripe', eventType: 'invoice.paid', tenant: null,
    reason: 'exhausted', attempts: 3, lastError: 'handler says no', link: `${CONSOLE}#/events/evt_dead_1`
  })
  // The letter gone and the sweep run again (as after a crash between the event and the letter): the letter is back, the event not twice.
  const dead = openQueue(redis.url, 'ops-inbound.dead')
  t.teardown(async () => await dead.close())
  await (await dead.getJob(`d_${jobId}`))?.remove()
  await worker.sweep()
  t.ok(await dead.getJob(`d_${jobId}`), 'the sweep wrote the letter again')
  t.same(await written('eventId', 'evt_dead_1'), { 'inbound.dead_lettered': 1 })

  // Without a database (no journal) the dead letter is all there is.
  const plain = createWorker(async () => { throw new Error('no') }, { redis: redis.url, queueName: 'ops-inbound', sweepIntervalMs: 0 })
  await worker.close()
  t.teardown(async () => await plain.close())
  await plain.start()
  const other = await addJob(queue, jobData({ eventId: 'evt_dead_2', retry: [] }))
  await eventually('dead.getJob(`d_${other}`) !== undefined', async () => await dead.getJob(`d_${other}`) !== undefined, 20_000)
  t.same(await written('eventId', 'evt_dead_2'), {}, 'no operational event without a database')
})

t.test('no loop: operational endpoints that fail, exhaust and answer 410 report nothing about themselves', async (t) => {
  await eventually('gone?.enabled === false && (exhausted?.n ?? 0) >= SCHEDULE.length + 1', async () => {
    const [gone] = await db.query<{ enabled: boolean }>('SELECT enabled FROM anvil.endpoints WHERE id = $1', [opsGoneId])
    const [exhausted] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM anvil.deliveries WHERE endpoint_id = $1 AND status = 'failed' GROUP BY message_id ORDER BY 1 DESC LIMIT 1", [opsDownId])
    return gone?.enabled === false && (exhausted?.n ?? 0) >= SCHEDULE.length + 1
  }, 90_000)
  t.same(await written('endpointId', opsDownId), {}, 'the failing operational endpoint: nothing')
  t.same(await written('endpointId', opsGoneId), {}, 'the 410 operational endpoint: disabled, nothing sent')
  t.match(await db.query('SELECT disabled_reason FROM anvil.endpoints WHERE id = $1', [opsGoneId]), [{ disabled_reason: 'the endpoint answered 410 Gone' }])
  t.ok(received('endpoint.disabled', 'endpointId', opsGoneId).length === 0 && seen.every((s) => s.data.endpointId !== opsDownId))
})
