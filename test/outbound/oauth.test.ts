/**
 * OAuth 2.0 client credentials to receivers (issue 37, contract 5), against a real token server on 127.0.0.1
 * that counts its fetches and a receiver that takes only the live token: a token is fetched once and shared,
 * fetched again once it expires and after a 401 (the delivery then sent once more); the SSRF guard refuses a
 * token URL that resolves to a blocked address; the client secret is stored encrypted and never appears in an
 * answer, a log line, job data or the delivery log; a token server that never answers fails the attempt at the
 * delivery timeout; a bad token URL or no encryption key is a 400.
 */
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { lookup as dnsLookup } from 'node:dns'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import anvilAdmin from '../../plugins/admin/admin.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const CLIENT_SECRET = 'oauth-client-s3cret-9d8c7b'
const logged: string[] = []
const logger = Object.fromEntries(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map((level) => [level, (...args: unknown[]) => { logged.push(JSON.stringify(args)) }]))
logger.child = () => logger

/** Client id → how long its tokens live (`expires_in`), and every token issued, in order. */
const lifetimes: Record<string, number> = { steady: 3600, brief: 1 }
const issued: Array<{ clientId: string, token: string, form: string }> = []
const revoked = new Set<string>()
const tokenServer = beforeAll(t, async () => await startReceiver((req, res) => {
  const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString('utf8')
  const [clientId = '', secret = ''] = basic.split(':').map(decodeURIComponent)
  const form = new URLSearchParams(req.body)
  if (secret !== CLIENT_SECRET || form.get('grant_type') !== 'client_credentials') {
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_client', error_description: `echo ${secret}` }))
    return
  }
  const token = `tok-${clientId}-${issued.length + 1}`
  issued.push({ clientId, token, form: req.body })
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: lifetimes[clientId] ?? 60 }))
}), async (r) => await r.close())
/** Takes a live, unrevoked token of the server's; anything else is 401. */
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  const token = (req.headers.authorization ?? '').replace(/^Bearer /, '')
  res.writeHead(issued.some((i) => i.token === token) && !revoked.has(token) ? 200 : 401).end()
}), async (r) => await r.close())
/** Takes the token request and never answers it. */
const silent = beforeAll(t, async () => await startReceiver(() => {}), async (r) => await r.close())
const outbound = beforeAll(t, async () => fixture.open({ queueName: 'oauth', dispatch: { pollIntervalMs: 100 }, logger: logger as never, encryptionKey: randomBytes(32).toString('hex') }))
const app = beforeAll(t, async () => {
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, outbound })
  return app
}, async (app) => await app.close())
// A name for the token server that resolves to a private address, as DNS rebinding would have it.
const BLOCKED_NAME = 'token.rebound.test'
const lookup = ((name: string, options: object, callback: (...args: unknown[]) => void) => {
  if (name === BLOCKED_NAME) return callback(null, [{ address: '10.9.9.9', family: 4 }])
  dnsLookup(name, options as never, callback as never)
}) as unknown as typeof dnsLookup
beforeAll(t, async () => {
  const worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, queueName: 'oauth', allowNets: '127.0.0.0/8', lookup, jitter: 0, logger: logger as never, timeoutMs: 2000 })
  await Promise.all([worker.start(), outbound.dispatcher.start()])
  return worker
}, async (worker) => await worker.close())

const noSecretIn = (t: Test, text: string, what: string): void => { t.notOk(text.includes(CLIENT_SECRET), `${what} holds no client secret`) }
const oauthOf = (clientId: string, tokenUrl = tokenServer.url + '/token') => ({ tokenUrl, clientId, clientSecret: CLIENT_SECRET, scope: 'webhooks:write', audience: 'https://receiver.example' })
const fetchesOf = (clientId: string): number => issued.filter((i) => i.clientId === clientId).length
const deliveredTo = (path: string): number => receiver.received.filter((r) => r.url === path).length
const outcomes = async (endpointId: string) => await db.query<{ status: string, http_status: number | null, error_class: string | null, error: string | null, request_headers: string | null }>(
  "SELECT status, http_status, error_class, error, request_headers::text FROM anvil.deliveries WHERE endpoint_id = $1 AND status <> 'started' ORDER BY id", [endpointId])

t.test('an endpoint with oauth answers it without the secret, stored encrypted; bad token URLs and no encryption key are 400s', async (t) => {
  const created = await app.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload: { url: receiver.url + '/steady', tenant: 'steady', oauth: oauthOf('steady') } })
  t.equal(created.statusCode, 201, created.body)
  t.same(created.json().oauth, { tokenUrl: tokenServer.url + '/token', clientId: 'steady', scope: 'webhooks:write', audience: 'https://receiver.example', authStyle: 'basic' })
  noSecretIn(t, created.body, 'the create answer')
  const id = created.json().id as string
  for (const url of [`/admin/endpoints/${id}`, '/admin/endpoints?tenant=steady', `/admin/endpoints/${id}/secret`]) noSecretIn(t, (await app.inject({ url, headers: auth })).body, url)
  const [row] = await db.query<{ oauth: string }>('SELECT oauth::text AS oauth FROM anvil.endpoints WHERE id = $1', [id])
  noSecretIn(t, row?.oauth ?? '', 'the stored row')
  t.match(JSON.parse(row?.oauth ?? '{}').clientSecret, /^anvil:enc:v1:/, 'the secret is sealed')
  const spec = (await app.inject({ url: '/admin/openapi.json', headers: auth })).json()
  t.ok(JSON.stringify(spec.paths['/admin/endpoints'].post.requestBody.content['application/json'].schema).includes('"tokenUrl"'), 'the OpenAPI document shows oauth')

  for (const tokenUrl of ['ftp://auth.example/token', 'https://user:pw@auth.example/token', 'not a url']) {
    const answer = await app.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload: { url: receiver.url + '/x', oauth: oauthOf('x', tokenUrl) } })
    t.equal(answer.statusCode, 400, tokenUrl)
    t.match(answer.json(), { code: 'ANVIL_ERR_INVALID_ENDPOINT', error: /oauth\.tokenUrl/ })
    noSecretIn(t, answer.body, 'the refusal')
  }
  const httpsOnly = fixture.open({ queueName: 'oauth-https', httpsOnly: true, encryptionKey: randomBytes(32).toString('base64') })
  await t.rejects(httpsOnly.endpoints.create({ url: 'https://receiver.example/h', oauth: oauthOf('h') }), { code: 'ANVIL_ERR_INVALID_ENDPOINT', message: /oauth\.tokenUrl must be https/ }, 'http token URLs are refused as http endpoint URLs are')
  const keyless = fixture.open({ queueName: 'oauth-keyless' })
  await t.rejects(keyless.endpoints.create({ url: receiver.url + '/k', oauth: oauthOf('k') }), { code: 'ANVIL_ERR_ENCRYPTION_KEY_REQUIRED', statusCode: 400 })
})

t.test('one token serves many deliveries; the token server sees one fetch with the credentials, scope and audience', async (t) => {
  const published = await Promise.all([1, 2, 3].map(async (n) => await outbound.publish({ type: 'order.paid', data: { n }, tenant: 'steady' })))
  await eventually('three deliveries arrive', async () => deliveredTo('/steady') === 3)
  t.equal(fetchesOf('steady'), 1, 'fetched once, then kept')
  const form = new URLSearchParams(issued[0]?.form)
  t.same([form.get('grant_type'), form.get('scope'), form.get('audience'), form.get('client_secret')], ['client_credentials', 'webhooks:write', 'https://receiver.example', null])
  t.ok(receiver.received.filter((r) => r.url === '/steady').every((r) => r.headers.authorization === 'Bearer tok-steady-1'))
  const [endpoint] = (await outbound.endpoints.list({ tenant: 'steady' })).items
  await eventually('the attempts are logged', async () => (await outcomes(endpoint?.id ?? '')).length === 3)
  const rows = await outcomes(endpoint?.id ?? '')
  t.ok(rows.every((row) => row.status === 'success' && JSON.parse(row.request_headers ?? '{}').authorization === '[redacted]'), 'the log says a token went, never which')
  t.notOk(JSON.stringify(rows).includes('tok-steady'), 'the delivery log holds no token')
  const client = new Redis(redis.url)
  const job = await client.hgetall(`{anvil}:oauth:${published[0]?.messageId ?? ''}.${endpoint?.id ?? ''}`)
  await client.quit()
  t.ok(Object.keys(job).length > 0, 'the job is found')
  noSecretIn(t, JSON.stringify(job), 'the job')
  t.notOk(JSON.stringify(job).includes('tok-steady'), 'the job holds no token')
})

t.test('a receiver\'s 401 drops the token: one fresh token, the delivery sent once more and delivered', async (t) => {
  revoked.add('tok-steady-1')
  const before = receiver.received.length
  await outbound.publish({ type: 'order.paid', data: { n: 4 }, tenant: 'steady' })
  await eventually('the retried POST arrives', async () => receiver.received.length === before + 2)
  t.same(receiver.received.slice(before).map((r) => r.headers.authorization), ['Bearer tok-steady-1', `Bearer ${issued.at(-1)?.token ?? ''}`])
  t.equal(fetchesOf('steady'), 2, 'one more fetch')
  const [endpoint] = (await outbound.endpoints.list({ tenant: 'steady' })).items
  await eventually('the attempt is logged', async () => (await outcomes(endpoint?.id ?? '')).length === 4)
  t.equal((await outcomes(endpoint?.id ?? '')).at(-1)?.status, 'success', 'one attempt, delivered')
})

t.test('a token is fetched again once it expires', async (t) => {
  await outbound.endpoints.create({ url: receiver.url + '/brief', tenant: 'brief', oauth: oauthOf('brief') })
  await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 'brief' })
  await eventually('the first delivery arrives', async () => deliveredTo('/brief') === 1)
  t.equal(fetchesOf('brief'), 1)
  // expires_in: 1 — kept for 0.9 s; the next delivery comes after it.
  await new Promise((resolve) => setTimeout(resolve, 1100))
  await outbound.publish({ type: 'order.paid', data: { n: 2 }, tenant: 'brief' })
  await eventually('the second delivery arrives', async () => deliveredTo('/brief') === 2)
  t.equal(fetchesOf('brief'), 2, 'fetched again after expiry')
  t.same(receiver.received.filter((r) => r.url === '/brief').map((r) => r.headers.authorization), ['Bearer tok-brief-3', 'Bearer tok-brief-4'])
})

t.test('the SSRF guard refuses a token URL that resolves to a blocked address; a refused secret is an oauth failure', async (t) => {
  const fetched = issued.length
  const { port } = new URL(tokenServer.url)
  const blocked = await outbound.endpoints.create({ url: receiver.url + '/blocked', tenant: 'blocked', oauth: oauthOf('blocked', `http://${BLOCKED_NAME}:${port}/token`) })
  const wrong = await outbound.endpoints.create({ url: receiver.url + '/wrong', tenant: 'wrong', oauth: { ...oauthOf('wrong'), clientSecret: 'not-the-secret' } })
  await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 'blocked' })
  await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 'wrong' })
  await eventually('both attempts are logged', async () => (await outcomes(blocked.id)).length > 0 && (await outcomes(wrong.id)).length > 0)
  t.match((await outcomes(blocked.id))[0], { status: 'failed', error_class: 'ssrf', error: /^OAuth: the token URL: .*refused/ })
  t.match((await outcomes(wrong.id))[0], { status: 'failed', error_class: 'oauth', error: 'OAuth: the token URL answered HTTP 401 (invalid_client)' })
  t.equal(issued.length, fetched, 'no token was issued')
  t.equal(deliveredTo('/blocked') + deliveredTo('/wrong'), 0, 'nothing reached the receiver')
  noSecretIn(t, logged.join('\n'), 'the service\'s and the worker\'s logs')
})

t.test('a token server that never answers fails the attempt at the delivery timeout, as a timeout', async (t) => {
  const hung = await outbound.endpoints.create({ url: receiver.url + '/hung', tenant: 'hung', oauth: oauthOf('hung', silent.url + '/token') })
  await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 'hung' })
  await eventually('the attempt is logged', async () => (await outcomes(hung.id)).length > 0, 20_000)
  t.match((await outcomes(hung.id))[0], { status: 'failed', error_class: 'timeout', error: 'OAuth: the token URL gave no token within 2000 ms' })
  t.ok(silent.received.length >= 1, 'the token server was asked')
  t.equal(deliveredTo('/hung'), 0, 'nothing reached the receiver')
})
