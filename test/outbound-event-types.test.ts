/**
 * The event-type catalog on real PostgreSQL and Redis: `PUT/GET/DELETE /admin/event-types`, types defined in code
 * with `defineEventTypes` (TypeBox), publish refusing data that breaks its type's schema with a 400 naming the
 * field's JSON pointer, and `strict: true` refusing a type the catalog does not hold.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'
import { Type } from '@sinclair/typebox'
import anvilAdmin from '../plugins/admin/admin.js'
import anvilOutbound from '../plugins/outbound.js'
import { defineEventTypes } from '../src/outbox/event-types.js'
import { outboundFixture } from './helpers/outbound.js'

const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const fixture = outboundFixture()
let pool: pg.Pool
t.before(() => { pool = fixture.db.pool() })
const catalog = defineEventTypes({ 'invoice.paid': Type.Object({ amount: Type.Integer({ minimum: 0 }), currency: Type.String() }, { description: 'An invoice was paid' }) })

async function service (options: { strict?: boolean, schema?: string } = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(anvilOutbound, { database: pool, redis: fixture.redis.url, eventTypes: catalog, ...options })
  await app.register(anvilAdmin, { token: TOKEN })
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

let app: FastifyInstance
t.before(async () => { app = await service() })
async function call (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: object, on = app) {
  const res = await on.inject({ method, url, headers: auth, ...(payload === undefined ? {} : { payload }) })
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
}

const USER_CREATED = {
  description: 'A user signed up',
  schema: { type: 'object', required: ['user'], properties: { user: { type: 'object', required: ['email'], properties: { email: { type: 'string' }, age: { type: 'integer' } } } } }
}

t.test('PUT stores a type, GET lists it beside the ones from code, PUT again replaces it, DELETE removes it', async (t) => {
  const put = await call('PUT', '/admin/event-types/user.created', USER_CREATED)
  t.equal(put.status, 200)
  t.match(put.body, { name: 'user.created', description: 'A user signed up', schema: USER_CREATED.schema, deprecated: false, source: 'api', updatedAt: String })
  const listed = await call('GET', '/admin/event-types')
  t.same(listed.body.items.map((item: { name: string, source: string }) => [item.name, item.source]), [['invoice.paid', 'code'], ['user.created', 'api']])
  t.match(listed.body.items[0], { description: 'An invoice was paid', schema: { type: 'object', required: ['amount', 'currency'] } }, 'a TypeBox type is listed as its JSON Schema')
  t.match((await call('PUT', '/admin/event-types/user.created', { ...USER_CREATED, deprecated: true })).body, { deprecated: true }, 'replaced')
  t.equal((await call('DELETE', '/admin/event-types/user.created')).status, 204)
  t.match(await call('DELETE', '/admin/event-types/user.created'), { status: 404, body: { code: 'ANVIL_ERR_NOT_FOUND' } })
  t.same((await call('GET', '/admin/event-types')).body.items.map((item: { name: string }) => item.name), ['invoice.paid'])
})

t.test('bad input: a name that is no event type, a schema that is no JSON Schema, a type from code: 400 { error, code }', async (t) => {
  t.match(await call('PUT', '/admin/event-types/has%20space', USER_CREATED), { status: 400, body: { code: String } })
  t.match(await call('PUT', '/admin/event-types/bad.schema', { schema: { type: 'no-such-type' } }), { status: 400, body: { error: /schema of bad\.schema is not a JSON Schema/, code: 'ANVIL_ERR_INVALID_MESSAGE' } })
  t.match(await call('PUT', '/admin/event-types/invoice.paid', USER_CREATED), { status: 400, body: { error: /defined in code/ } })
  t.match(await call('PUT', '/admin/event-types/no.schema', { description: 'x' }), { status: 400 })
})

t.test('publish: data that breaks its type\'s schema is 400 naming the JSON pointer of the field; data that fits is published', async (t) => {
  await call('PUT', '/admin/event-types/user.created', USER_CREATED)
  t.same(await call('POST', '/admin/messages', { type: 'user.created', data: { user: { email: 'a@example.com', age: 'old' } } }),
    { status: 400, body: { error: 'Invalid message: data/user/age: must be integer', code: 'ANVIL_ERR_INVALID_MESSAGE' } })
  t.same((await call('POST', '/admin/messages', { type: 'user.created', data: { user: {} } })).body.error, 'Invalid message: data/user/email: must have required property \'email\'')
  t.same((await call('POST', '/admin/messages', { type: 'invoice.paid', data: { amount: -1, currency: 'eur' } })).body.error, 'Invalid message: data/amount: must be >= 0', 'a type from code, checked the same way')
  t.equal((await call('POST', '/admin/messages', { type: 'user.created', data: { user: { email: 'a@example.com', age: 30 } } })).status, 202)
  t.equal((await call('POST', '/admin/messages', { type: 'not.in.catalog', data: 'anything' })).status, 202, 'without strict, a type the catalog does not hold is published')
  await t.rejects(app.anvil.publish({ type: 'invoice.paid', data: { amount: 1 } }), { code: 'ANVIL_ERR_INVALID_MESSAGE', message: /data\/currency/ }, 'app.anvil.publish checks too')
  const typed = catalog.typed(app.anvil.publish)
  t.match(await typed({ type: 'invoice.paid', data: { amount: 5, currency: 'eur' } }), { messageId: /^msg_/ })
})

t.test('strict: true refuses a type the catalog does not hold', async (t) => {
  const strict = await service({ strict: true })
  t.same(await call('POST', '/admin/messages', { type: 'not.in.catalog', data: {} }, strict),
    { status: 400, body: { error: 'Invalid message: type not.in.catalog is not in the event-type catalog (strict)', code: 'ANVIL_ERR_INVALID_MESSAGE' } })
  t.equal((await call('POST', '/admin/messages', { type: 'invoice.paid', data: { amount: 1, currency: 'eur' } }, strict)).status, 202)
})

t.test('publish in the caller\'s transactions holding every pooled connection: the catalog reads on the caller\'s client, no wait for the pool', async (t) => {
  await call('PUT', '/admin/event-types/order.shipped', { schema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } })
  const small = fixture.db.pool(2)
  t.teardown(async () => await small.end())
  const app = Fastify()
  await app.register(anvilOutbound, { database: small, redis: fixture.redis.url })
  await app.ready()
  t.teardown(async () => await app.close())
  // Both connections of the pool are the callers', each in a transaction, as a service publishing in its own writes.
  const clients = await Promise.all([small.connect(), small.connect()])
  const published = await Promise.all(clients.map(async (client, i) => {
    await client.query('BEGIN')
    try {
      const result = await app.anvil.publish({ type: 'order.shipped', data: { id: `o${i}` } }, { client })
      await t.rejects(app.anvil.publish({ type: 'order.shipped', data: {} }, { client }), { code: 'ANVIL_ERR_INVALID_MESSAGE' }, 'still checked')
      await client.query('COMMIT')
      return result.messageId
    } finally {
      client.release()
    }
  }))
  t.equal(published.length, 2)
  t.equal((await fixture.db.query('SELECT 1 FROM anvil.outbox WHERE id = ANY($1)', [published])).length, 2, 'both committed')
})
