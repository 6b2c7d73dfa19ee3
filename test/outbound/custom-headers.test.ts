/**
 * Custom headers per endpoint (issue 37, contract 2): given through the admin API, sent with each delivery to a
 * real receiver, reserved names refused with 400, and the values kept like secrets: never answered, never in job
 * data, `[redacted]` in the delivery log, absent from the worker's and the service's logs.
 */
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { Webhook } from 'standardwebhooks'
import { adminDelivery, outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const SECRET_VALUES = ['Bearer receiver-s3cret-t0ken', 'tenant-key-9f8e7d', 'second-value-4c4c']
const logged: string[] = []
const logger = Object.fromEntries(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map((level) => [level, (...args: unknown[]) => { logged.push(JSON.stringify(args)) }]))
logger.child = () => logger

const receiver = beforeAll(t, async () => await startReceiver(), async (r) => await r.close())
const { outbound, app } = adminDelivery(fixture, { queueName: 'headers', token: TOKEN, logger: logger as never })

const noValueIn = (t: Test, text: string, what: string): void => {
  for (const value of SECRET_VALUES) t.notOk(text.includes(value), `${what} holds no header value`)
}

t.test('POST /admin/endpoints takes headers; the answers name them and never show a value', async (t) => {
  const created = await app.inject({
    method: 'POST', url: '/admin/endpoints', headers: auth,
    payload: { url: receiver.url + '/h', tenant: 'h', headers: { Authorization: SECRET_VALUES[0], 'X-Tenant-Key': SECRET_VALUES[1] } }
  })
  t.equal(created.statusCode, 201)
  t.same(created.json().headerNames, ['authorization', 'x-tenant-key'])
  noValueIn(t, created.body, 'the create answer')
  const read = await app.inject({ url: `/admin/endpoints/${created.json().id as string}`, headers: auth })
  t.same(read.json().headerNames, ['authorization', 'x-tenant-key'])
  noValueIn(t, read.body, 'the endpoint answer')
  const list = await app.inject({ url: '/admin/endpoints?tenant=h', headers: auth })
  noValueIn(t, list.body, 'the list')
  const spec = (await app.inject({ url: '/admin/openapi.json', headers: auth })).json()
  const body = spec.paths['/admin/endpoints'].post.requestBody.content['application/json'].schema
  t.ok(JSON.stringify(body).includes('"headers"'), 'the OpenAPI document shows the headers field')
})

t.test('reserved or malformed names, and values with CR or LF, are refused with 400', async (t) => {
  const refused = ['webhook-id', 'Webhook-Signature', 'Content-Type', 'content-length', 'Host', 'transfer-encoding', 'connection', 'user-agent', 'traceparent', 'x-webhook-signature', 'bad name', 'a:b', '']
  for (const name of refused) {
    const answer = await app.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload: { url: receiver.url + '/r', headers: { [name]: 'v' } } })
    t.equal(answer.statusCode, 400, `${JSON.stringify(name)} refused`)
    t.equal(answer.json().code, 'ANVIL_ERR_INVALID_ENDPOINT')
  }
  const crlf = await app.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload: { url: receiver.url + '/r', headers: { 'x-a': 'v\r\nx-injected: 1' } } })
  t.equal(crlf.statusCode, 400, 'a value with CR LF is refused')
  t.notOk(crlf.body.includes('x-injected'), 'the refusal does not quote the value')
  const endpoint = await outbound.endpoints.create({ url: receiver.url + '/r' })
  const patched = await app.inject({ method: 'PATCH', url: `/admin/endpoints/${endpoint.id}`, headers: auth, payload: { headers: { 'Webhook-Id': 'x' } } })
  t.equal(patched.statusCode, 400, 'a patch is checked alike')
  const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, 'v']))
  t.equal((await app.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload: { url: receiver.url + '/r', headers: many } })).statusCode, 400, 'at most 20')
  const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`x-h${i}`, 'v']))
  await outbound.endpoints.update(endpoint.id, { headers: twenty })
  await t.rejects(outbound.endpoints.update(endpoint.id, { headers: { 'x-one-more': 'v' } }), { code: 'ANVIL_ERR_INVALID_ENDPOINT' }, 'a patch may not merge past 20')
  t.equal((await outbound.endpoints.get(endpoint.id)).headerNames.length, 20, 'the refused patch changed nothing')
})

t.test('each delivery carries the headers, signed as before; the log keeps [redacted]; a patch adds, replaces and removes', async (t) => {
  const [endpoint] = (await outbound.endpoints.list({ tenant: 'h' })).items
  const { secret } = await outbound.endpoints.currentSecret(endpoint?.id ?? '')
  const first = await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 'h' })
  await receiver.waitFor(1)
  const got = receiver.received.find((r) => r.headers['webhook-id'] === first.messageId)
  t.equal(got?.headers.authorization, SECRET_VALUES[0])
  t.equal(got?.headers['x-tenant-key'], SECRET_VALUES[1])
  t.equal(got?.headers['content-type'], 'application/json', 'Anvil\'s own headers are untouched')
  t.match(new Webhook(secret).verify(got?.body ?? '', got?.headers as Record<string, string>), { data: { n: 1 } })

  await eventually('the attempt is logged', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status = 'success'", [first.messageId])).length === 1)
  const message = await app.inject({ url: `/admin/messages/${first.messageId}`, headers: auth })
  t.match(message.json().deliveries[0].requestHeaders, { authorization: '[redacted]', 'x-tenant-key': '[redacted]', 'webhook-id': first.messageId })
  noValueIn(t, message.body, 'the message answer')
  const rows = await db.query<{ h: string }>('SELECT request_headers::text AS h FROM anvil.deliveries WHERE message_id = $1', [first.messageId])
  noValueIn(t, JSON.stringify(rows), 'the delivery log\'s rows')
  const client = new Redis(redis.url)
  const job = await client.hgetall(`{anvil}:headers:${first.messageId}.${endpoint?.id ?? ''}`)
  await client.quit()
  t.ok(Object.keys(job).length > 0, 'the job is found')
  noValueIn(t, JSON.stringify(job), 'the job')

  const patched = await app.inject({ method: 'PATCH', url: `/admin/endpoints/${endpoint?.id ?? ''}`, headers: auth, payload: { headers: { 'x-tenant-key': null, 'X-Second': SECRET_VALUES[2] } } })
  t.equal(patched.statusCode, 200)
  t.same(patched.json().headerNames, ['authorization', 'x-second'])
  noValueIn(t, patched.body, 'the patch answer')
  const second = await outbound.publish({ type: 'order.paid', data: { n: 2 }, tenant: 'h' })
  await eventually('the second delivery arrives', async () => receiver.received.some((r) => r.headers['webhook-id'] === second.messageId))
  const again = receiver.received.find((r) => r.headers['webhook-id'] === second.messageId)
  t.equal(again?.headers.authorization, SECRET_VALUES[0], 'kept')
  t.equal(again?.headers['x-second'], SECRET_VALUES[2], 'added')
  t.equal(again?.headers['x-tenant-key'], undefined, 'removed')
  noValueIn(t, logged.join('\n'), 'the service\'s and the worker\'s logs')
})
