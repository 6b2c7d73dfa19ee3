/**
 * The portal's server side (issue 36): an endpoint's stats (the list's success rate and last attempt, the
 * overview's outcomes over time and p50), each attempt's request and answer headers (capped, credentials
 * redacted), a hand retry told from a scheduled attempt, a failure delivered later flagged as such, and the theme
 * and embedding a link is minted with (each value checked; the operator's default under it). Real PostgreSQL,
 * Redis, HTTP and a delivery worker.
 */
import t from 'tap'
import Fastify from 'fastify'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import { createDeliveryWorker, type DeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { HEADERS_CAP_BYTES } from '../../src/send/attempt-headers.js'
import { outboundFixture } from '../helpers/outbound.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-portal-api-0123456789'
const admin = { authorization: `Bearer ${TOKEN}` }
const fixture = outboundFixture()
const { db, redis } = fixture
// A message whose data says `fail` fails its first delivery; every other POST succeeds. The answer carries a cookie and a flood of headers.
const seen = new Set<string>()
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  const id = String(req.headers['webhook-id'])
  const first = JSON.parse(req.body).data.fail === true && !seen.has(id)
  seen.add(id)
  res.setHeader('set-cookie', 'session=receiver-secret')
  res.setHeader('x-trace', 'trace-1')
  for (let i = 0; i < 60; i++) res.setHeader(`x-flood-${i}`, 'y'.repeat(100))
  res.statusCode = first ? 500 : 200
  res.end(first ? 'down' : '{"received":true}')
}), async (receiver) => await receiver.close())

const app = Fastify()
let worker: DeliveryWorker | undefined
const DEFAULT_THEME = { mode: 'dark' as const, primaryColor: '#0f766e', fontFamily: 'Inter, "Open Sans", sans-serif' }
beforeStep(t, async () => {
  await app.register(anvilOutbound, { database: db.url, redis: redis.url, queueName: 'papi', retrySchedule: [3_600_000], runDispatcher: true, dispatch: { pollIntervalMs: 50 } })
  await app.register(anvilAdmin, { token: TOKEN, portal: { publicUrl: 'https://hooks.example', theme: DEFAULT_THEME, frameAncestors: ['https://app.example'] } })
  await app.ready()
  worker = createDeliveryWorker({
    redis: redis.url, store: outboundInternals(app.anvilOutbound).store, queueName: 'papi', allowNets: '127.0.0.0/8'
  })
  await worker.start()
})
t.teardown(async () => {
  await worker?.close()
  await app.close()
})

async function call (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) {
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
}
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
async function mint (tenant: string, extra: object = {}): Promise<string> {
  const res = await call('POST', '/admin/portal/tokens', admin, { tenant, ...extra })
  if (res.status !== 201) throw new Error(`mint: ${JSON.stringify(res)}`)
  return res.body.token
}
async function endpoint (tenant: string, path = '/hook'): Promise<string> {
  const res = await call('POST', '/admin/endpoints', admin, { url: `${receiver.url}${path}`, tenant, eventTypes: [] })
  return res.body.id
}
const deliveriesOf = async (id: string) => (await call('GET', `/admin/deliveries?endpoint=${id}`, admin)).body.items as Array<Record<string, any>>

t.test('stats: the list\'s success rate and last attempt, the overview\'s buckets and p50, of the token\'s own endpoints only', async (t) => {
  const acme = await endpoint('acme-stats')
  const other = await endpoint('other-stats')
  for (let i = 0; i < 3; i++) await call('POST', '/admin/messages', admin, { type: 'order.created', tenant: 'acme-stats', data: { i, fail: i !== 1 } })
  await call('POST', '/admin/messages', admin, { type: 'order.created', tenant: 'other-stats', data: {} })
  await eventually('(deliveriesOf(acme)).filter((d) => d.status !== \'started\').length >= …', async () => (await deliveriesOf(acme)).filter((d) => d.status !== 'started').length >= 3 && (await deliveriesOf(other)).length >= 1)
  const done = (await deliveriesOf(acme)).filter((d) => d.status !== 'started')
  const success = done.filter((d) => d.status === 'success').length
  const failed = done.filter((d) => d.status === 'failed').length
  t.ok(success > 0 && failed > 0, `both outcomes happened (${success} success, ${failed} failed)`)

  const token = await mint('acme-stats', { scopes: ['read'] })
  const list = await call('GET', `/admin/endpoint-stats?ids=${acme},${other}`, bearer(token))
  t.equal(list.status, 200)
  t.same(list.body.items.map((s: any) => s.endpointId), [acme], 'another tenant\'s endpoint is left out')
  const [summary] = list.body.items
  t.equal(summary.success, success)
  t.equal(summary.failed, failed)
  t.equal(summary.successRate, success / (success + failed))
  t.ok(Date.parse(summary.lastAttemptAt) >= Date.parse(done[done.length - 1]!.createdAt), 'the last attempt\'s time')

  const stats = await call('GET', `/admin/endpoints/${acme}/stats`, bearer(token))
  t.equal(stats.status, 200)
  t.equal(stats.body.bucketSeconds, 3600, 'a day in hourly buckets')
  t.ok(stats.body.buckets.length >= 24 && stats.body.buckets.length <= 25, 'every bucket of the window, empty ones too')
  t.equal(stats.body.buckets.reduce((n: number, b: any) => n + b.success, 0), success)
  t.equal(stats.body.buckets.reduce((n: number, b: any) => n + b.failed, 0), failed)
  const durations = done.map((d) => d.durationMs as number).sort((a, b) => a - b)
  t.equal(stats.body.p50Ms, durations[Math.ceil(durations.length / 2) - 1], 'p50 is the median duration')
  t.equal((await call('GET', `/admin/endpoints/${other}/stats`, bearer(token))).status, 404, 'another tenant\'s endpoint is not found')
  t.equal((await call('GET', `/admin/endpoints/${acme}/stats?hours=0`, bearer(token))).status, 400)
  const many = Array.from({ length: 201 }, (_, i) => `ep_${i}`).join(',')
  t.equal((await call('GET', `/admin/endpoint-stats?ids=${many}`, admin)).status, 400, 'at most 200 endpoints')
})

t.test('an attempt keeps its request and answer headers, capped, credentials redacted; a hand retry says so; a failure delivered later is flagged', async (t) => {
  const id = await endpoint('acme-headers')
  const published = await call('POST', '/admin/messages', admin, { type: 'order.created', tenant: 'acme-headers', data: { fail: true } })
  const messageId = published.body.messageId
  await eventually('(deliveriesOf(id)).some((d) => d.status !== \'started\')', async () => (await deliveriesOf(id)).some((d) => d.status !== 'started'))
  const [first] = await deliveriesOf(id)
  t.equal(first!.status, 'failed')
  t.equal(first!.trigger, 'schedule')
  t.equal(first!.deliveredLater, false)
  t.notOk('requestHeaders' in first!, 'lists leave the headers out')

  const retried = await call('POST', `/admin/deliveries/${first!.id}/retry`, admin)
  t.equal(retried.status, 202)
  await eventually('(deliveriesOf(id)).some((d) => d.status === \'success\')', async () => (await deliveriesOf(id)).some((d) => d.status === 'success'))
  const items = await deliveriesOf(id)
  const hand = items.find((d) => d.status === 'success')!
  t.equal(hand.trigger, 'retry', 'the hand retry is told from the schedule')
  t.equal(items.find((d) => d.id === first!.id)!.deliveredLater, true, 'the failure was delivered later')

  const message = await call('GET', `/admin/messages/${messageId}`, admin)
  const attempts = message.body.deliveries as Array<Record<string, any>>
  for (const attempt of attempts) {
    t.equal(attempt.requestHeaders['webhook-id'], messageId)
    t.match(attempt.requestHeaders['webhook-signature'], /^v1,[A-Za-z0-9+/=]{0,8}…$/, 'the signature cut short')
    t.equal(attempt.requestHeaders['content-type'], 'application/json')
    t.equal(attempt.responseHeaders['set-cookie'], '[redacted]', 'a receiver\'s cookie is not kept')
    t.equal(attempt.responseHeaders['x-trace'], 'trace-1')
    t.ok(Buffer.byteLength(JSON.stringify(attempt.responseHeaders)) <= HEADERS_CAP_BYTES, 'the flood is capped')
  }
})

t.test('a reveal answers the current secret to a write link of the tenant only', async (t) => {
  const created = await call('POST', '/admin/endpoints', admin, { url: `${receiver.url}/hook`, tenant: 'acme-reveal' })
  const write = await mint('acme-reveal')
  const shown = await call('GET', `/admin/endpoints/${created.body.id}/secret`, bearer(write))
  t.equal(shown.body.secret, created.body.secret)
  const rotated = await call('POST', `/admin/endpoints/${created.body.id}/rotate-secret`, bearer(write), { graceSeconds: 3600 })
  t.equal((await call('GET', `/admin/endpoints/${created.body.id}/secret`, bearer(write))).body.secret, rotated.body.secret, 'the newest, not the one in its grace period')
  t.equal((await call('GET', `/admin/endpoints/${created.body.id}/secret`, bearer(await mint('acme-reveal', { scopes: ['read'] })))).status, 403, 'not to a read-only link')
  t.equal((await call('GET', `/admin/endpoints/${created.body.id}/secret`, bearer(await mint('someone-else')))).status, 404, 'not to another tenant')
})

t.test('a link\'s theme and embedding: each value checked, the operator\'s default under the link\'s own', async (t) => {
  const bad = [
    { primaryColor: 'red;background:url(https://evil)' },
    { primaryColor: 'rgb(1,2,3)' },
    { fontFamily: 'Inter; } body { display: none' },
    { fontFamily: 'url(https://evil/x.woff)' },
    { logoUrl: 'http://insecure.example/logo.png' },
    { logoUrl: 'javascript:alert(1)' },
    { logoUrl: 'https://x.example/a"onerror="b' },
    { mode: 'sepia' },
    { extra: 1 }
  ]
  for (const theme of bad) {
    const res = await call('POST', '/admin/portal/tokens', admin, { tenant: 'acme', theme })
    t.equal(res.status, 400, `refused: ${JSON.stringify(theme)}`)
  }
  const plain = await mint('acme')
  const session = await call('GET', '/admin/portal/session', bearer(plain))
  t.same(session.body.theme, DEFAULT_THEME, 'portal.theme is every link\'s default')
  t.equal(session.body.embed, false)
  t.same(session.body.frameAncestors, ['https://app.example'])

  const theme = { mode: 'light', primaryColor: '#b91c1c', logoUrl: 'https://cdn.example/logo.svg' }
  const own = await mint('acme', { theme, embed: true })
  const themed = await call('GET', '/admin/portal/session', bearer(own))
  t.same(themed.body.theme, { ...DEFAULT_THEME, ...theme }, 'the link\'s own theme over the default, field by field')
  t.equal(themed.body.embed, true)
})
