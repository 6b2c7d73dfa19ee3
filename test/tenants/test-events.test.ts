/**
 * Test events obey a publish's rules (issue 33, item 5), sent with a tenant's write portal token on real PostgreSQL
 * and Redis: a type the endpoint does not subscribe to, a type a strict catalog lacks, and data that breaks the
 * type's schema are 400, as `POST /admin/messages` answers the same data, and no message is kept; Anvil's own
 * types pass a strict catalog.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeStep } from '../helpers/before-all.js'

const TOKEN = 'admin-token-0123456789'
const fixture = outboundFixture()

async function service (strict: boolean): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(anvilOutbound, { database: fixture.db.url, redis: fixture.redis.url, strict })
  // This file's tenant sends more test events than a minute's default allows (test/tenants/quotas.test.ts holds that).
  await app.register(anvilAdmin, { token: TOKEN, portal: { limits: { testEventsPerMinute: 1000 } } })
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

interface Answer { status: number, body: Record<string, unknown> }
async function call (app: FastifyInstance, token: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object): Promise<Answer> {
  const res = await app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, body: res.body === '' ? {} : res.json() }
}

const INVOICE = { type: 'object', required: ['id', 'amount'], properties: { id: { type: 'string', pattern: '^inv_[0-9a-z]+$' }, amount: { type: 'integer', minimum: 1 } } }
let lax: FastifyInstance
let strict: FastifyInstance
let tenant: string
/** An endpoint of tenant acme taking invoice.paid only, and one taking every type. */
let only: string
let every: string
beforeStep(t, async () => {
  lax = await service(false)
  strict = await service(true)
  await call(lax, TOKEN, 'PUT', '/admin/event-types/invoice.paid', { schema: INVOICE })
  tenant = String((await call(lax, TOKEN, 'POST', '/admin/portal/tokens', { tenant: 'acme' })).body.token)
  only = String((await call(lax, tenant, 'POST', '/admin/endpoints', { url: 'https://acme.example/only', eventTypes: ['invoice.paid'] })).body.id)
  every = String((await call(lax, tenant, 'POST', '/admin/endpoints', { url: 'https://acme.example/every' })).body.id)
})

const kept = async (type: string): Promise<number> =>
  Number((await fixture.db.query<{ n: string }>('SELECT count(*) AS n FROM anvil.outbox WHERE type = $1', [type]))[0]?.n)

t.test('a type the endpoint does not subscribe to is 400 naming what it takes, and no message is kept', async (t) => {
  t.match(await call(lax, tenant, 'POST', `/admin/endpoints/${only}/test`, { type: 'user.created', data: {} }),
    { status: 400, body: { code: 'ANVIL_ERR_INVALID_MESSAGE', error: `Invalid message: endpoint ${only} does not take type user.created (it subscribes to invoice.paid)` } })
  t.equal(await kept('user.created'), 0)
  t.equal((await call(lax, tenant, 'POST', `/admin/endpoints/${only}/test`, {})).status, 202, 'Anvil\'s plain anvil.test goes to any endpoint')
})

t.test('data that breaks the type\'s schema is 400, as POST /admin/messages answers the same data', async (t) => {
  for (const data of [{ id: 'in_1', amount: 5 }, { id: 'inv_1', amount: 0 }, { amount: 5 }, 'not an object']) {
    const published = await call(lax, TOKEN, 'POST', '/admin/messages', { type: 'invoice.paid', data })
    const tested = await call(lax, tenant, 'POST', `/admin/endpoints/${only}/test`, { type: 'invoice.paid', data })
    t.equal(tested.status, 400, JSON.stringify(data))
    t.same(tested, published, `the same answer as a publish: ${String(published.body.error)}`)
  }
  t.equal(await kept('invoice.paid'), 0, 'none of them kept')
  const fits = await call(lax, tenant, 'POST', `/admin/endpoints/${only}/test`, { type: 'invoice.paid', data: { id: 'inv_7a', amount: 5 } })
  t.match(fits, { status: 202, body: { messageId: /^msg_/ } }, 'data that fits is sent')
  t.equal(await kept('invoice.paid'), 1)
})

t.test('a strict catalog refuses a type it lacks, to an endpoint that takes every type; Anvil\'s own types pass', async (t) => {
  t.match(await call(strict, tenant, 'POST', `/admin/endpoints/${every}/test`, { type: 'not.in.catalog', data: {} }),
    { status: 400, body: { error: 'Invalid message: type not.in.catalog is not in the event-type catalog (strict)' } })
  t.same(await call(strict, tenant, 'POST', `/admin/endpoints/${every}/test`, { type: 'not.in.catalog', data: {} }),
    await call(strict, TOKEN, 'POST', '/admin/messages', { type: 'not.in.catalog', data: {} }), 'as a publish is answered')
  t.equal(await kept('not.in.catalog'), 0)
  t.equal((await call(lax, tenant, 'POST', `/admin/endpoints/${every}/test`, { type: 'not.in.catalog', data: {} })).status, 202, 'without strict, it is sent')
  t.equal((await call(strict, tenant, 'POST', `/admin/endpoints/${every}/test`, {})).status, 202, 'anvil.test')
  t.equal((await call(strict, tenant, 'POST', `/admin/endpoints/${every}/test`, { type: 'endpoint.failing', data: { test: true } })).status, 202, 'endpoint.failing')
})
