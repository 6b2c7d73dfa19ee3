/**
 * What one tenant's portal tokens may make (issue 33, item 3), flooded with concurrent requests over two
 * replicas (two apps on one PostgreSQL): endpoints per tenant, test events, hand retries and (per token) writes
 * per minute, and a test event's size. Past a count: 429 ANVIL_ERR_TENANT_RATE_LIMITED with Retry-After; past
 * the endpoints: 403 ANVIL_ERR_ENDPOINT_QUOTA. No flood passes a limit, and the operator is never counted.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import type { PortalLimits } from '../../src/portal/portal-limits.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-0123456789'
const fixture = outboundFixture()
const LIMITS: PortalLimits = { endpointsPerTenant: 5, testEventsPerMinute: 10, retriesPerMinute: 5, writesPerMinute: 1000, testEventBytes: 1024 }

/** A replica: an app with a small pool of its own (the machine's PostgreSQL is shared). */
async function replica (limits: PortalLimits): Promise<FastifyInstance> {
  const pool = new pg.Pool({ connectionString: fixture.db.url, max: 4 })
  t.teardown(async () => await pool.end())
  const app = Fastify()
  await app.register(anvilOutbound, { database: pool, redis: fixture.redis.url })
  await app.register(anvilAdmin, { token: TOKEN, portal: { limits } })
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

interface Answer { status: number, code: unknown, retryAfter: string | undefined, body: Record<string, unknown> }
async function call (app: FastifyInstance, token: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object): Promise<Answer> {
  const res = await app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload }) })
  const body = res.body === '' ? {} : res.json()
  return { status: res.statusCode, code: body.code, retryAfter: res.headers['retry-after'] as string | undefined, body }
}

/** `n` requests at once, alternating between the replicas; their answers counted by status. */
async function flood (replicas: FastifyInstance[], n: number, one: (app: FastifyInstance, i: number) => Promise<Answer>): Promise<{ by: Map<number, number>, answers: Answer[] }> {
  const answers = await Promise.all(Array.from({ length: n }, async (_, i) => await one(replicas[i % replicas.length] as FastifyInstance, i)))
  const by = new Map<number, number>()
  for (const answer of answers) by.set(answer.status, (by.get(answer.status) ?? 0) + 1)
  return { by, answers }
}

/** The counts are per minute of PostgreSQL's clock: a flood starts early in one, so it never straddles two. */
async function earlyInAMinute (): Promise<void> {
  await eventually('the database clock before second 40 of its minute', async () => Number((await fixture.db.query<{ s: string }>('SELECT extract(second FROM clock_timestamp()) AS s'))[0]?.s) < 40, 70_000)
}

let a: FastifyInstance
let b: FastifyInstance
let mint: (tenant: string) => Promise<string>
beforeStep(t, async () => {
  a = await replica(LIMITS)
  b = await replica(LIMITS)
  mint = async (tenant) => String((await call(a, TOKEN, 'POST', '/admin/portal/tokens', { tenant })).body.token)
})

t.test('60 concurrent creates over two replicas make exactly endpointsPerTenant endpoints; the rest are 403 ANVIL_ERR_ENDPOINT_QUOTA', async (t) => {
  const token = await mint('many')
  const { by, answers } = await flood([a, b], 60, async (app, i) => await call(app, token, 'POST', '/admin/endpoints', { url: `https://many.example/${i}` }))
  t.same(Object.fromEntries(by), { 201: 5, 403: 55 })
  t.match(answers.find((answer) => answer.status === 403)?.body, { code: 'ANVIL_ERR_ENDPOINT_QUOTA', error: /many has its 5 endpoints \(portal\.limits\.endpointsPerTenant\)/ })
  const rows = await fixture.db.query<{ n: string }>('SELECT count(*) AS n FROM anvil.endpoints WHERE tenant = $1', ['many'])
  t.equal(Number(rows[0]?.n), 5, 'the database holds five')
  t.equal((await call(a, TOKEN, 'POST', '/admin/endpoints', { url: 'https://many.example/operator', tenant: 'many' })).status, 201, 'the operator still creates one')
  t.equal((await call(b, token, 'POST', '/admin/endpoints', { url: 'https://many.example/again' })).status, 403, 'which the tenant\'s count includes')
})

t.test('50 concurrent test events over two replicas: testEventsPerMinute pass, the rest 429 with Retry-After; the operator is not counted', async (t) => {
  const token = await mint('tester')
  const endpoint = String((await call(a, token, 'POST', '/admin/endpoints', { url: 'https://tester.example/hook' })).body.id)
  await earlyInAMinute()
  const { by, answers } = await flood([a, b], 50, async (app) => await call(app, token, 'POST', `/admin/endpoints/${endpoint}/test`, {}))
  t.same(Object.fromEntries(by), { 202: 10, 429: 40 })
  const refused = answers.find((answer) => answer.status === 429)
  t.match(refused, { code: 'ANVIL_ERR_TENANT_RATE_LIMITED', body: { error: 'Too many test events: at most 10 a minute (portal.limits.testEventsPerMinute); retry when the minute ends (Retry-After)' } })
  t.ok(Number(refused?.retryAfter) >= 1 && Number(refused?.retryAfter) <= 60, `Retry-After: ${String(refused?.retryAfter)} s`)
  t.equal((await call(b, await mint('tester'), 'POST', `/admin/endpoints/${endpoint}/test`, {})).status, 429, 'another token of the tenant shares its count')
  t.equal((await call(a, TOKEN, 'POST', `/admin/endpoints/${endpoint}/test`, {})).status, 202, 'the operator sends one')
  const other = await mint('quiet')
  const quiet = String((await call(a, other, 'POST', '/admin/endpoints', { url: 'https://quiet.example/hook' })).body.id)
  t.equal((await call(b, other, 'POST', `/admin/endpoints/${quiet}/test`, {})).status, 202, 'another tenant sends one')
})

t.test('hand retries per minute: 30 concurrent recovers over two replicas, retriesPerMinute pass; a delivery\'s retry is counted with them', async (t) => {
  const token = await mint('retrier')
  const endpoint = String((await call(a, token, 'POST', '/admin/endpoints', { url: 'https://retrier.example/hook' })).body.id)
  await earlyInAMinute()
  const { by } = await flood([a, b], 30, async (app) => await call(app, token, 'POST', `/admin/endpoints/${endpoint}/recover`, { since: '2020-01-01T00:00:00Z' }))
  t.same(Object.fromEntries(by), { 202: 5, 429: 25 })
  t.match(await call(a, token, 'POST', '/admin/deliveries/1/retry'), { status: 429, code: 'ANVIL_ERR_TENANT_RATE_LIMITED', body: { error: /hand retries: at most 5 a minute/ } })
})

t.test('writes per minute are per portal token: 40 concurrent changes over two replicas, writesPerMinute pass; another token, a read and the operator are not held', async (t) => {
  const c = await replica({ ...LIMITS, writesPerMinute: 20 })
  const d = await replica({ ...LIMITS, writesPerMinute: 20 })
  const token = await mint('writer')
  const endpoint = String((await call(a, TOKEN, 'POST', '/admin/endpoints', { url: 'https://writer.example/hook', tenant: 'writer' })).body.id)
  await earlyInAMinute()
  const { by } = await flood([c, d], 40, async (app, i) => await call(app, token, 'PATCH', `/admin/endpoints/${endpoint}`, { description: `change ${i}` }))
  t.same(Object.fromEntries(by), { 200: 20, 429: 20 })
  t.match(await call(c, token, 'PATCH', `/admin/endpoints/${endpoint}`, { description: 'one more' }), { status: 429, body: { error: /writes: at most 20 a minute \(portal\.limits\.writesPerMinute\)/ } })
  t.equal((await call(c, token, 'GET', `/admin/endpoints/${endpoint}`)).status, 200, 'a read is not a write')
  t.equal((await call(d, await mint('writer'), 'PATCH', `/admin/endpoints/${endpoint}`, { description: 'another token' })).status, 200, 'another token of the tenant writes')
  t.equal((await call(c, TOKEN, 'PATCH', `/admin/endpoints/${endpoint}`, { description: 'the operator' })).status, 200, 'the operator writes')
})

t.test('a test event is capped at testEventBytes for a portal token: 413, and nothing kept; the operator keeps maxPayloadBytes', async (t) => {
  const token = await mint('big')
  const endpoint = String((await call(a, token, 'POST', '/admin/endpoints', { url: 'https://big.example/hook' })).body.id)
  const data = { blob: 'x'.repeat(2000) }
  t.match(await call(a, token, 'POST', `/admin/endpoints/${endpoint}/test`, { data }),
    { status: 413, code: 'ANVIL_ERR_PAYLOAD_TOO_LARGE', body: { error: 'Message data is 2011 bytes, over the 1024-byte limit' } })
  const rows = await fixture.db.query<{ n: string }>('SELECT count(*) AS n FROM anvil.outbox WHERE tenant = $1', ['big'])
  t.equal(Number(rows[0]?.n), 0)
  t.equal((await call(a, TOKEN, 'POST', `/admin/endpoints/${endpoint}/test`, { data })).status, 202, 'the operator\'s test event of the same data')
})
