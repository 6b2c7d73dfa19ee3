/**
 * A hostile catalog (issue 33, item 2), on real PostgreSQL, Redis and HTTP: a backtracking `pattern` runs in
 * linear time (RE2), a check that takes long runs beside the event loop (a worker thread) and is cut at its
 * time, a schema past the size and depth bounds is refused when saved, and each schema is compiled in a scope
 * of its own, so an `$id` is saved twice and changed on another replica without a 500.
 */
import t from 'tap'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import anvilHealth from '../../plugins/health.js'
import type { AnvilOutboundOptions } from '../../plugins/outbound.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-0123456789'
const fixture = outboundFixture()

/** A listening server with the outgoing webhooks, the admin API and the health routes. */
async function service (options: Partial<AnvilOutboundOptions> = {}): Promise<{ app: FastifyInstance, base: string }> {
  const app = Fastify()
  await app.register(anvilOutbound, { database: fixture.db.url, redis: fixture.redis.url, ...options })
  await app.register(anvilAdmin, { token: TOKEN })
  await app.register(anvilHealth, { redis: fixture.redis.url })
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => await app.close())
  return { app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}

interface Answer { status: number, body: { error?: string, code?: string } }

/** A request over its own connection: `sent` resolves once the body is written, `answer` with the reply. */
function send (base: string, method: string, path: string, payload?: unknown): { sent: Promise<void>, answer: Promise<Answer> } {
  let sent!: () => void
  const written = new Promise<void>((resolve) => { sent = resolve })
  const answer = new Promise<Answer>((resolve, reject) => {
    const body = payload === undefined ? undefined : JSON.stringify(payload)
    const req = request(`${base}${path}`, {
      method,
      agent: false,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }
    }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : JSON.parse(text) }))
    })
    req.on('error', reject)
    req.on('finish', sent)
    req.end(body)
  })
  return { sent: written, answer }
}

const call = async (base: string, method: string, path: string, payload?: unknown): Promise<Answer> => await send(base, method, path, payload).answer

let base: string
beforeStep(t, async () => { ({ base } = await service()) })

const AS = 'a'.repeat(40) + '!'

t.test('a backtracking pattern runs in linear time: 40 a\'s and a "!" against ^(a+)+$, in pattern, patternProperties and propertyNames, are answered, and /health/live beside them', async (t) => {
  t.equal((await call(base, 'PUT', '/admin/event-types/redos.pattern', { schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } })).status, 200)
  t.equal((await call(base, 'PUT', '/admin/event-types/redos.keys', { schema: { type: 'object', patternProperties: { '^(a+)+$': { type: 'integer' } } } })).status, 200)
  t.equal((await call(base, 'PUT', '/admin/event-types/redos.names', { schema: { type: 'object', propertyNames: { pattern: '^(a+)+$' } } })).status, 200)
  const pattern = send(base, 'POST', '/admin/messages', { type: 'redos.pattern', data: { s: AS } })
  const keys = send(base, 'POST', '/admin/messages', { type: 'redos.keys', data: { [AS]: 'not an integer, but the key does not match' } })
  const names = send(base, 'POST', '/admin/messages', { type: 'redos.names', data: { [AS]: 1 } })
  await Promise.all([pattern.sent, keys.sent, names.sent])
  t.equal((await call(base, 'GET', '/health/live')).status, 200, '/health/live answered')
  t.same(await pattern.answer, { status: 400, body: { error: 'Invalid message: data/s: must match pattern "^(a+)+$"', code: 'ANVIL_ERR_INVALID_MESSAGE' } })
  t.equal((await keys.answer).status, 202, 'a key the pattern does not match is not held to its schema')
  t.same(await names.answer, { status: 400, body: { error: 'Invalid message: data: must match pattern "^(a+)+$"', code: 'ANVIL_ERR_INVALID_MESSAGE' } })
  t.equal((await call(base, 'POST', '/admin/messages', { type: 'redos.pattern', data: { s: 'aaaa' } })).status, 202, 'what the pattern matches is published')
})

t.test('a pattern RE2 cannot run in linear time (a look-ahead, a back-reference) is refused when the type is saved, saying why', async (t) => {
  t.match(await call(base, 'PUT', '/admin/event-types/look.ahead', { schema: { type: 'string', pattern: '^(?=a)a+$' } }),
    { status: 400, body: { code: 'ANVIL_ERR_INVALID_SCHEMA', error: /look\.ahead .*linear time .*invalid perl operator: \(\?=/ } })
  t.match(await call(base, 'PUT', '/admin/event-types/back.ref', { schema: { type: 'object', patternProperties: { '^(a)\\1$': { type: 'integer' } } } }),
    { status: 400, body: { code: 'ANVIL_ERR_INVALID_SCHEMA', error: /back\.ref .*linear time .*invalid escape sequence/ } })
  t.equal((await call(base, 'GET', '/admin/event-types')).status, 200)
})

t.test('a check that takes long runs beside the event loop: /health/live is answered while it runs, it is refused at its time, and the publish behind it passes', async (t) => {
  // Every branch of the anyOf recurses into the array: the check doubles with each level of nesting.
  const schema = { $defs: { a: { anyOf: [{ type: 'array', items: { $ref: '#/$defs/a' } }, { type: 'array', items: { $ref: '#/$defs/a' }, minItems: 2 }, { type: 'integer' }] } }, $ref: '#/$defs/a' }
  t.equal((await call(base, 'PUT', '/admin/event-types/slow.check', { schema })).status, 200)
  // Compiled and its schema cached, so the hostile publish goes straight to its check.
  t.equal((await call(base, 'POST', '/admin/messages', { type: 'slow.check', data: [1, [2, 3]] })).status, 202)
  let deep: unknown = 0
  for (let level = 0; level < 20; level++) deep = [deep, 'x']
  const hostile = send(base, 'POST', '/admin/messages', { type: 'slow.check', data: deep })
  let hostileAnswered = false
  void hostile.answer.then(() => { hostileAnswered = true })
  await hostile.sent
  const behind = send(base, 'POST', '/admin/messages', { type: 'slow.check', data: [4, [5]] })
  const live = await call(base, 'GET', '/health/live')
  t.equal(live.status, 200, '/health/live answered')
  t.notOk(hostileAnswered, 'while the hostile publish was still being checked')
  t.match(await hostile.answer, { status: 400, body: { code: 'ANVIL_ERR_SCHEMA_TOO_SLOW', error: /schema of slow\.check took over 1000 ms/ } })
  t.equal((await behind.answer).status, 202, 'the publish queued behind it is checked by a fresh worker')
  t.match(await call(base, 'POST', '/admin/messages', { type: 'slow.check', data: ['x'] }), { status: 400, body: { code: 'ANVIL_ERR_INVALID_MESSAGE' } }, 'and later ones too')
})

t.test('a schema past the bounds is refused when saved with a 400 naming the bound and its option: 538 KB flat, 100 deep', async (t) => {
  const properties = Object.fromEntries(Array.from({ length: 12_000 }, (_, i) => [`field_${i}`, { type: 'string', maxLength: 100 + i }]))
  const flat = { type: 'object', properties }
  t.ok(JSON.stringify(flat).length > 538_000)
  t.match(await call(base, 'PUT', '/admin/event-types/too.large', { schema: flat }),
    { status: 400, body: { code: 'ANVIL_ERR_SCHEMA_TOO_LARGE', error: /too\.large .*over the 131072-byte limit \(maxSchemaBytes\)/ } })
  let deep: Record<string, unknown> = { type: 'string' }
  for (let level = 0; level < 50; level++) deep = { type: 'object', properties: { a: deep } }
  t.match(await call(base, 'PUT', '/admin/event-types/too.deep', { schema: deep }),
    { status: 400, body: { code: 'ANVIL_ERR_SCHEMA_TOO_LARGE', error: /too\.deep .*deeper than 64 objects and arrays \(maxSchemaDepth\)/ } })
  t.equal((await call(base, 'GET', '/admin/event-types/schema.json')).status, 200, 'neither was stored')
})

t.test('an $id: saved twice, then changed on another replica, each replica checks against the schema in force and none answers 500', async (t) => {
  const other = (await service()).base
  const v1 = { $id: 'https://example.com/schemas/order.json', type: 'object', properties: { qty: { type: 'integer' } } }
  const v2 = { ...v1, properties: { qty: { type: 'integer', maximum: 10 } } }
  t.equal((await call(base, 'PUT', '/admin/event-types/order.placed', { schema: v1 })).status, 200)
  t.equal((await call(base, 'PUT', '/admin/event-types/order.placed', { schema: v1 })).status, 200, 'saved a second time')
  t.equal((await call(other, 'POST', '/admin/messages', { type: 'order.placed', data: { qty: 50 } })).status, 202, 'the other replica checks against the first version')
  t.equal((await call(base, 'PUT', '/admin/event-types/order.placed', { schema: v2 })).status, 200, 'changed, the $id kept')
  const statuses = new Set<number>()
  await eventually('answer.status === 400 && answer.body.error === \'Invalid message: data…', async () => {
    const answer = await call(other, 'POST', '/admin/messages', { type: 'order.placed', data: { qty: 50 } })
    statuses.add(answer.status)
    return answer.status === 400 && answer.body.error === 'Invalid message: data/qty: must be <= 10'
  })
  t.notOk(statuses.has(500), `no 500 meanwhile (${[...statuses].join(', ')})`)
  t.equal((await call(other, 'POST', '/admin/messages', { type: 'order.placed', data: { qty: 5 } })).status, 202)
})
