/**
 * The event-type catalog on real PostgreSQL and Redis: `PUT/GET/DELETE /admin/event-types`, types defined in code
 * with `defineEventTypes` (TypeBox), publish refusing data that breaks its type's schema with a 400 naming the
 * field's JSON pointer, and `strict: true` refusing a type the catalog does not hold.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'
import { Type, type TSchema } from '@sinclair/typebox'
import Ajv2020Module from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import { defineEventTypes, type EventTypes, type EventTypeMap } from '../../src/catalog/event-types.js'
import { envelope } from '../../src/outbox/fan-out.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeStep } from '../helpers/before-all.js'

const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const Ajv2020 = Ajv2020Module.default
const addFormats = addFormatsModule.default
const fixture = outboundFixture()
let pool: pg.Pool
beforeStep(t, () => { pool = fixture.db.pool() })
const catalog = defineEventTypes({ 'invoice.paid': Type.Object({ amount: Type.Integer({ minimum: 0 }), currency: Type.String() }, { description: 'An invoice was paid' }) })

async function service (options: { strict?: boolean, schema?: string, eventTypes?: Pick<EventTypes<EventTypeMap>, 'schemas'> } = {}): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(anvilOutbound, { database: pool, redis: fixture.redis.url, eventTypes: catalog, ...options })
  await app.register(anvilAdmin, { token: TOKEN })
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

let app: FastifyInstance
beforeStep(t, async () => { app = await service() })
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
  t.match(await call('PUT', '/admin/event-types/bad.schema', { schema: { type: 'objekt' } }),
    { status: 400, body: { error: /^The schema of event type bad\.schema is not a valid JSON Schema \(draft-07\): data\/type must be equal to one of the allowed values/, code: 'ANVIL_ERR_INVALID_SCHEMA' } })
  t.match(await call('PUT', '/admin/event-types/invoice.paid', USER_CREATED), { status: 400, body: { error: /defined in code/ } })
  t.match(await call('PUT', '/admin/event-types/no.schema', { description: 'x' }), { status: 400 })
})

t.test('a schema that is no JSON Schema, defined in code, is refused where it is defined, naming its type', async (t) => {
  t.throws(() => defineEventTypes({ 'order.placed': Type.Object({}), 'order.shipped': { type: 'objekt' } as unknown as TSchema }),
    { code: 'ANVIL_ERR_INVALID_SCHEMA', statusCode: 400, message: /^The schema of event type order\.shipped is not a valid JSON Schema \(draft-07\): data\/type must be/ })
  t.throws(() => defineEventTypes({ 'order.placed': { required: 'id' } as unknown as TSchema }), { code: 'ANVIL_ERR_INVALID_SCHEMA', message: /order\.placed.*data\/required must be array/ })
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

t.test('formats are checked: date-time, email, uri, uuid, in a stored type and in one from code; a format ajv-formats lacks is a note', async (t) => {
  await call('PUT', '/admin/event-types/contact.added', {
    schema: {
      type: 'object',
      required: ['email', 'at', 'site', 'ref'],
      properties: { email: { type: 'string', format: 'email' }, at: { type: 'string', format: 'date-time' }, site: { type: 'string', format: 'uri' }, ref: { type: 'string', format: 'uuid' }, phone: { type: 'string', format: 'phone' } }
    }
  })
  const good = { email: 'a@example.com', at: '2026-12-03T12:00:00Z', site: 'https://example.com/a', ref: '0b4e7a47-5b2c-4a55-9d3a-2f7c1c0f6f3e', phone: 'any text' }
  t.equal((await call('POST', '/admin/messages', { type: 'contact.added', data: good })).status, 202, 'every format met, and an unknown one not checked')
  const broken: Array<[string, string]> = [['email', 'not-an-email'], ['at', '3 December'], ['site', 'no scheme'], ['ref', 'not-a-uuid']]
  for (const [field, value] of broken) {
    const format = { email: 'email', at: 'date-time', site: 'uri', ref: 'uuid' }[field] as string
    t.same(await call('POST', '/admin/messages', { type: 'contact.added', data: { ...good, [field]: value } }),
      { status: 400, body: { error: `Invalid message: data/${field}: must match format "${format}"`, code: 'ANVIL_ERR_INVALID_MESSAGE' } }, `${field}: ${format}`)
  }
  const fromCode = await service({ eventTypes: defineEventTypes({ 'refund.issued': Type.Object({ at: Type.String({ format: 'date-time' }) }) }) })
  t.same((await call('POST', '/admin/messages', { type: 'refund.issued', data: { at: 'yesterday' } }, fromCode)).body?.error, 'Invalid message: data/at: must match format "date-time"')
  t.equal((await call('POST', '/admin/messages', { type: 'refund.issued', data: { at: '2026-12-03T12:00:00.000Z' } }, fromCode)).status, 202)
})

t.test('GET /admin/event-types/schema.json: one JSON Schema (2020-12) of a delivery\'s body, which a published message\'s envelope fits', async (t) => {
  await call('PUT', '/admin/event-types/user.created', USER_CREATED)
  await call('PUT', '/admin/event-types/user.gone', { description: 'Old', schema: { type: 'object' }, deprecated: true })
  const res = await app.inject({ method: 'GET', url: '/admin/event-types/schema.json', headers: auth })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/schema\+json/)
  const schema = res.json()
  t.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema')
  t.match(schema.$defs, { InvoicePaid: { properties: { type: { const: 'invoice.paid' } } }, InvoicePaidData: { required: ['amount', 'currency'] }, UserCreated: { description: 'A user signed up' }, UserGone: { deprecated: true } })
  t.equal((await app.inject({ method: 'GET', url: '/admin/event-types/schema.json' })).statusCode, 401, 'the admin token, as every admin route')

  const ajv = new Ajv2020({ strict: false, logger: false })
  addFormats(ajv)
  const validate = ajv.compile(schema)
  const bodyOf = async (messageId: string): Promise<unknown> => {
    const [row] = await fixture.db.query<{ id: string, type: string, data: string, created_at: Date }>('SELECT id, type, data::text AS data, created_at FROM anvil.outbox WHERE id = $1', [messageId])
    if (row === undefined) throw new Error(`no message ${messageId}`)
    return JSON.parse(envelope({ id: row.id, publicType: null, tenant: null, data: row.data, createdAt: row.created_at }, row.type))
  }
  for (const message of [{ type: 'invoice.paid', data: { amount: 5, currency: 'eur' } }, { type: 'user.created', data: { user: { email: 'b@example.com' } } }]) {
    const body = await bodyOf((await app.anvil.publish(message)).messageId)
    t.ok(validate(body), `the envelope of ${message.type} fits: ${JSON.stringify(validate.errors)}`)
    t.notOk(validate({ ...(body as object), data: { amount: 'five' } }), 'and one whose data breaks its type does not')
  }
})
