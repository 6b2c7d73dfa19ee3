/**
 * Portal tokens: minted by an operator for one tenant, they open the admin API on that tenant's records only.
 * Every admin route of the app is enumerated as it registers, so a route added later that does not opt in is
 * checked to answer a portal token 403. Real PostgreSQL, Redis, HTTP and a delivery worker.
 */
import t from 'tap'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import { journalAdminRoutes } from '../../plugins/journal/admin-routes.js'
import { createDeliveryWorker, type DeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { mintPortalToken, portalKey } from '../../src/portal/portal-token.js'
import { outboundFixture } from '../helpers/outbound.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-portal-0123456789'
const admin = { authorization: `Bearer ${TOKEN}` }
const fixture = outboundFixture()
const { db, redis } = fixture
// Every receiver answer fails, so deliveries have failures to retry and recover.
const receiver = beforeAll(t, async () => await startReceiver((_req, res) => { res.statusCode = 500; res.end('down') }), async (receiver) => await receiver.close())

const logged: string[] = []
const app = Fastify({
  logger: { level: 'trace', stream: new Writable({ write (chunk: Buffer, _encoding, done) { logged.push(chunk.toString('utf8')); done() } }) }
})
const routes: Array<Pick<RouteOptions, 'method' | 'url' | 'config'>> = []
app.addHook('onRoute', (route) => { routes.push({ method: route.method, url: route.url, config: route.config }) })
let outbound: FastifyInstance['anvilOutbound']
let worker: DeliveryWorker | undefined
beforeStep(t, async () => {
  await app.register(anvilOutbound, { database: db.url, redis: redis.url, maxPayloadBytes: 2048, queueName: 'portal', runDispatcher: true, dispatch: { pollIntervalMs: 100 } })
  const log = openEventLog({ redis: redis.url, queueName: 'portal-journal', database: db.url })
  await app.register(anvilAdmin, { token: TOKEN, routes: [journalAdminRoutes(log)], portal: { publicUrl: 'https://hooks.example/' } })
  await app.ready()
  outbound = app.anvilOutbound
  worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, queueName: 'portal', allowNets: '127.0.0.0/8' })
  await worker.start()
})
t.teardown(async () => {
  await app.close()
  await worker?.close()
})

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT'
async function call (method: Method, url: string, headers: Record<string, string>, payload?: unknown) {
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
}

async function mint (tenant: string, extra: object = {}): Promise<{ token: string, url: string, expiresAt: string }> {
  const res = await call('POST', '/admin/portal/tokens', admin, { tenant, ...extra })
  if (res.status !== 201) throw new Error(`mint: ${JSON.stringify(res)}`)
  return res.body
}
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

/** The routes a portal token may use, by the scope each needs: the contract. Any other admin route is 403. */
const PORTAL_ROUTES: Record<string, 'read' | 'write'> = {
  'GET /admin/endpoints': 'read',
  'POST /admin/endpoints': 'write',
  'GET /admin/endpoints/:id': 'read',
  'GET /admin/endpoints/:id/stats': 'read',
  'GET /admin/endpoints/:id/secret': 'write',
  'GET /admin/endpoint-stats': 'read',
  'PATCH /admin/endpoints/:id': 'write',
  'DELETE /admin/endpoints/:id': 'write',
  'POST /admin/endpoints/:id/rotate-secret': 'write',
  'POST /admin/endpoints/:id/test': 'write',
  'POST /admin/endpoints/:id/recover': 'write',
  'GET /admin/messages/:id': 'read',
  'GET /admin/deliveries': 'read',
  'POST /admin/deliveries/:id/retry': 'write',
  'GET /admin/event-types': 'read',
  'GET /admin/event-types/schema.json': 'read',
  'GET /admin/portal/session': 'read'
}

const adminRoutes = (): Array<{ method: string, url: string, scope: 'read' | 'write' | undefined }> => routes
  .flatMap((route) => [route.method].flat().map((method) => ({ method, url: route.url, scope: route.config?.anvilPortal })))
  .filter((route) => route.url.startsWith('/admin') && route.method !== 'HEAD' && route.method !== 'OPTIONS')

t.test('POST /admin/portal/tokens: 201 { token, url, expiresAt }, a one-time code in the url\'s fragment, never the token; bad input 400', async (t) => {
  const before = Date.now()
  const minted = await call('POST', '/admin/portal/tokens', admin, { tenant: 'acme' })
  t.equal(minted.status, 201)
  t.match(minted.body.token, /^anvil_pt_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
  t.match(minted.body.url, /^https:\/\/hooks\.example\/admin\/portal\/#code=anvil_pl_[A-Za-z0-9_-]{43}$/)
  const expires = Date.parse(minted.body.expiresAt)
  t.ok(expires >= before + 3600_000 && expires <= Date.now() + 3600_000, 'an hour by default')
  const week = await mint('acme', { ttlSeconds: 7 * 24 * 3600 })
  t.ok(Date.parse(week.expiresAt) > Date.now() + 7 * 24 * 3600_000 - 60_000, 'seven days at most')
  for (const body of [{}, { tenant: '' }, { tenant: 'acme', ttlSeconds: 7 * 24 * 3600 + 1 }, { tenant: 'acme', ttlSeconds: 0 },
    { tenant: 'acme', scopes: ['admin'] }, { tenant: 'acme', scopes: [] }, { tenant: 'acme', colour: 'red' }]) {
    t.match(await call('POST', '/admin/portal/tokens', admin, body), { status: 400, body: { code: 'ANVIL_ERR_BAD_REQUEST' } }, JSON.stringify(body))
  }
  t.match(await call('POST', '/admin/portal/tokens', {}, { tenant: 'acme' }), { status: 401 }, 'operators only')
  const session = await call('GET', '/admin/portal/session', bearer(minted.body.token))
  const plain = { theme: {}, embed: false, frameAncestors: [] }
  t.same(session, { status: 200, body: { tenant: 'acme', scopes: ['read', 'write'], expiresAt: minted.body.expiresAt, ...plain } }, 'whose token it is')
  t.same((await call('GET', '/admin/portal/session', admin)).body, { tenant: null, scopes: ['read', 'write'], expiresAt: null, ...plain })
  const own = await app.inject({ method: 'POST', url: '/admin/portal/tokens', headers: { ...admin, host: 'anvil.internal:8080' }, payload: { tenant: 'acme' } })
  t.equal(own.statusCode, 201)
})

t.test('without publicUrl the link starts with the request\'s origin and the admin prefix', async (t) => {
  const other = Fastify()
  await other.register(anvilAdmin, { token: TOKEN, prefix: '/ops', outbound })
  t.teardown(async () => await other.close())
  const res = await other.inject({ method: 'POST', url: '/ops/portal/tokens', headers: { ...admin, host: 'anvil.internal:8080' }, payload: { tenant: 'acme' } })
  t.equal(res.statusCode, 201)
  t.match(res.json().url, /^http:\/\/anvil\.internal:8080\/ops\/portal\/#code=anvil_pl_/)
})

t.test('a portal token reaches exactly the routes that opt in, with their scope; every other admin route is 403', async (t) => {
  const registered = adminRoutes()
  t.ok(registered.length > 30, `${registered.length} admin routes enumerated`)
  const optedIn = Object.fromEntries(registered.filter((route) => route.scope !== undefined).map((route) => [`${route.method} ${route.url}`, route.scope]))
  t.same(optedIn, PORTAL_ROUTES, 'the routes open to a portal token are the contract\'s')
  const { token } = await mint('acme')
  const readOnly = (await mint('acme', { scopes: ['read'] })).token
  for (const route of registered) {
    const url = route.url.replace(/:[a-z]+/gi, 'x').replace('*', 'x.js')
    const payload = route.method === 'GET' || route.method === 'DELETE' ? undefined : {}
    const key = `${route.method} ${route.url}`
    if (route.scope === undefined) {
      t.match(await call(route.method as Method, url, bearer(token), payload), { status: 403, body: { code: 'ANVIL_ERR_FORBIDDEN' } }, key)
    } else {
      const res = await call(route.method as Method, url, bearer(token), payload)
      t.not(res.status, 403, `${key} open`)
      t.not(res.status, 401, `${key} open`)
      if (route.scope === 'write') {
        t.match(await call(route.method as Method, url, bearer(readOnly), payload), { status: 403, body: { code: 'ANVIL_ERR_FORBIDDEN' } }, `${key} needs write`)
      }
    }
  }
})

t.test('forged, tampered, expired, wrongly keyed and revoked tokens are 401', async (t) => {
  const { token } = await mint('acme')
  const [signed, mac] = token.split('.') as [string, string]
  const claims = JSON.parse(Buffer.from(signed.slice('anvil_pt_'.length), 'base64url').toString('utf8'))
  const swapped = `anvil_pt_${Buffer.from(JSON.stringify({ ...claims, tenant: 'globex' })).toString('base64url')}.${mac}`
  const flipped = `${signed}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'AB' : 'AA'}`
  const otherKey = mintPortalToken(portalKey('another-admin-token-0123456789'), { tenant: 'acme' }).token
  const expired = mintPortalToken(portalKey(TOKEN), { tenant: 'acme', ttlSeconds: 60 }, Date.now() - 61_000).token
  for (const [name, bad] of [['tenant swapped', swapped], ['MAC changed', flipped], ['another key', otherKey], ['expired', expired],
    ['no MAC', signed], ['garbage', 'anvil_pt_!!'], ['huge', `anvil_pt_${'a'.repeat(5000)}.${mac}`]] as const) {
    // Said to the tenant holding the link, who has no admin token.
    t.same(await call('GET', '/admin/endpoints', bearer(bad)), { status: 401, body: { error: 'Wrong portal link: it was changed, has expired or was revoked; ask for a new one', code: 'ANVIL_ERR_UNAUTHORIZED' } }, name)
  }
  t.equal((await call('GET', '/admin/endpoints', bearer(token))).status, 200, 'the token itself works')

  const other = await mint('globex')
  const revoked = await call('POST', '/admin/portal/tenants/acme/revoke', admin)
  t.equal(revoked.status, 200)
  t.equal(revoked.body.tenant, 'acme')
  for (const [method, url] of [['GET', '/admin/endpoints'], ['GET', '/admin/event-types'], ['POST', '/admin/messages']] as const) {
    t.match(await call(method, url, bearer(token), method === 'POST' ? {} : undefined), { status: 401, body: { error: /^Wrong portal link/, code: 'ANVIL_ERR_UNAUTHORIZED' } }, `revoked: ${method} ${url}`)
  }
  t.equal((await call('GET', '/admin/endpoints', bearer(other.token))).status, 200, 'another tenant\'s token still works')
  // Issued after the revocation: a token of the same millisecond counts as revoked.
  while (Date.now() <= Date.parse(revoked.body.revokedBefore)) await new Promise((resolve) => setImmediate(resolve))
  const fresh = await mint('acme')
  t.equal((await call('GET', '/admin/endpoints', bearer(fresh.token))).status, 200, 'a token minted after the revocation works')
  t.match(await call('POST', '/admin/portal/tenants/acme/revoke', bearer(fresh.token)), { status: 403 }, 'a portal token cannot revoke')
  const rows = await db.query('SELECT tenant FROM anvil.portal_revocations')
  t.same(rows, [{ tenant: 'acme' }], 'the revocation is a row in PostgreSQL, which every replica reads')
})

t.test('the tenant\'s view: its own endpoints, messages and deliveries; another tenant\'s are 404, naming one is 403', async (t) => {
  const theirs = await call('POST', '/admin/endpoints', admin, { url: `${receiver.url}/globex`, tenant: 'globex' })
  const untenanted = await call('POST', '/admin/endpoints', admin, { url: `${receiver.url}/none` })
  const { token } = await mint('initech')
  const acme = bearer(token)

  const created = await call('POST', '/admin/endpoints', acme, { url: `${receiver.url}/initech`, eventTypes: ['order.paid'] })
  t.equal(created.status, 201)
  t.match(created.body, { tenant: 'initech', secret: /^whsec_/ })
  const id = created.body.id as string
  t.equal((await call('POST', '/admin/endpoints', acme, { url: `${receiver.url}/x`, tenant: 'initech' })).status, 201, 'naming its own tenant is fine')
  t.match(await call('POST', '/admin/endpoints', acme, { url: `${receiver.url}/x`, tenant: 'globex' }), { status: 403, body: { code: 'ANVIL_ERR_FORBIDDEN' } })

  const list = await call('GET', '/admin/endpoints', acme)
  t.equal(list.status, 200)
  t.ok(list.body.items.length === 2 && list.body.items.every((e: { tenant: string }) => e.tenant === 'initech'), 'only its own endpoints')
  t.match(await call('GET', '/admin/endpoints?tenant=globex', acme), { status: 403 })
  t.equal((await call('GET', '/admin/endpoints?tenant=initech', acme)).body.items.length, 2)

  for (const other of [theirs.body.id as string, untenanted.body.id as string, 'ep_none']) {
    for (const [method, url, payload] of [
      ['GET', `/admin/endpoints/${other}`, undefined], ['PATCH', `/admin/endpoints/${other}`, { enabled: false }],
      ['DELETE', `/admin/endpoints/${other}`, undefined], ['POST', `/admin/endpoints/${other}/rotate-secret`, {}],
      ['POST', `/admin/endpoints/${other}/test`, {}], ['POST', `/admin/endpoints/${other}/recover`, { since: '2026-01-01T00:00:00Z' }],
      ['GET', `/admin/deliveries?endpoint=${other}`, undefined]
    ] as const) {
      t.same(await call(method, url, acme, payload), { status: 404, body: { error: `no endpoint ${other}`, code: 'ANVIL_ERR_NOT_FOUND' } }, `${method} ${url}`)
    }
  }
  t.equal((await call('GET', `/admin/endpoints/${theirs.body.id as string}`, admin)).body.enabled, true, 'another tenant\'s endpoint untouched')

  t.equal((await call('GET', `/admin/endpoints/${id}`, acme)).status, 200)
  t.match(await call('PATCH', `/admin/endpoints/${id}`, acme, { description: 'ours' }), { status: 200, body: { description: 'ours' } })
  t.match(await call('PATCH', `/admin/endpoints/${id}`, acme, { tenant: 'globex' }), { status: 403 })
  t.match(await call('PATCH', `/admin/endpoints/${id}`, acme, { tenant: null }), { status: 403 })
  t.match(await call('PATCH', `/admin/endpoints/${id}`, acme, { enabled: false }), { status: 200, body: { enabled: false } }, 'disable')
  t.match(await call('PATCH', `/admin/endpoints/${id}`, acme, { enabled: true }), { status: 200, body: { enabled: true } })
  const rotated = await call('POST', `/admin/endpoints/${id}/rotate-secret`, acme, { graceSeconds: 0 })
  t.match(rotated, { status: 200, body: { secret: /^whsec_/ } })
  t.not(rotated.body.secret, created.body.secret)

  // A test event to its own endpoint: the delivery worker POSTs it (and fails: the receiver answers 500).
  const tested = await call('POST', `/admin/endpoints/${id}/test`, acme, { type: 'order.paid', data: { n: 1 } })
  t.equal(tested.status, 202)
  const messageId = tested.body.messageId as string
  await outbound.publish({ type: 'order.paid', tenant: 'globex', data: { n: 2 } })
  // A row is written `started` before its POST, then settled: wait for the failures.
  const delivered = async (endpoint: string): Promise<boolean> => (await call('GET', `/admin/deliveries?endpoint=${endpoint}&status=failed`, admin)).body.items.length > 0
  await eventually('delivered(id) && delivered(theirs.body.id as string)', async () => await delivered(id) && await delivered(theirs.body.id as string))
  const ours = await call('GET', '/admin/deliveries', acme)
  t.equal(ours.status, 200)
  t.ok(ours.body.items.length >= 1 && ours.body.items.every((d: { endpointId: string }) => d.endpointId === id), 'only deliveries to its own endpoints')
  const filtered = (await call('GET', `/admin/deliveries?endpoint=${id}&status=failed`, acme)).body.items
  t.ok(filtered.length >= 1 && filtered.every((d: { endpointId: string }) => d.endpointId === id), 'filtered by its own endpoint')
  const theirDelivery = (await call('GET', `/admin/deliveries?endpoint=${theirs.body.id as string}`, admin)).body.items[0]
  t.ok(theirDelivery, 'globex has a delivery')

  const message = await call('GET', `/admin/messages/${messageId}`, acme)
  t.match(message, { status: 200, body: { id: messageId, tenant: 'initech' } })
  t.ok(message.body.deliveries.length >= 1 && message.body.deliveries.every((d: { endpointId: string }) => d.endpointId === id), 'its deliveries')
  t.same(await call('GET', `/admin/messages/${theirDelivery.messageId as string}`, acme),
    { status: 404, body: { error: `no message ${theirDelivery.messageId as string}`, code: 'ANVIL_ERR_NOT_FOUND' } })
  t.match(await call('POST', `/admin/deliveries/${ours.body.items[0].id as string}/retry`, acme), { status: 202, body: { endpointId: id, messageId } })
  t.same(await call('POST', `/admin/deliveries/${theirDelivery.id as string}/retry`, acme),
    { status: 404, body: { error: `no delivery ${theirDelivery.id as string}`, code: 'ANVIL_ERR_NOT_FOUND' } })
  t.match(await call('POST', `/admin/endpoints/${id}/recover`, acme, { since: new Date(Date.now() - 3600_000).toISOString() }), { status: 202 })

  t.match(await call('GET', '/admin/event-types', acme), { status: 200, body: { items: [] } })
  t.match(await call('GET', '/admin/event-types/schema.json', acme), { status: 200, body: { $schema: 'https://json-schema.org/draft/2020-12/schema', $defs: {} } })
  t.match(await call('PUT', '/admin/event-types/order.paid', acme, { schema: {} }), { status: 403 })
  t.match(await call('POST', '/admin/messages', acme, { type: 'order.paid', data: {} }), { status: 403 })
  t.match(await call('GET', '/admin/events', acme), { status: 403 })

  const spare = (await call('GET', '/admin/endpoints', acme)).body.items.find((e: { id: string }) => e.id !== id)
  t.equal((await call('DELETE', `/admin/endpoints/${spare.id as string}`, acme)).status, 204)
})

t.test('the SSRF guard and the size limits hold for a tenant as for an operator', async (t) => {
  const acme = bearer((await mint('hooli')).token)
  const created = await call('POST', '/admin/endpoints', acme, { url: 'http://169.254.169.254/latest/meta-data' })
  t.equal(created.status, 201)
  t.match(await call('POST', `/admin/endpoints/${created.body.id as string}/test`, acme, { data: { big: 'x'.repeat(4096) } }),
    { status: 413, body: { code: 'ANVIL_ERR_PAYLOAD_TOO_LARGE' } }, 'maxPayloadBytes')
  t.match(await call('POST', '/admin/endpoints', acme, { url: 'ftp://x.example/' }), { status: 400, body: { code: 'ANVIL_ERR_INVALID_ENDPOINT' } })
  t.equal((await call('POST', `/admin/endpoints/${created.body.id as string}/test`, acme, {})).status, 202)
  // Its row is written `started` before the send, then settled.
  const settled = `/admin/deliveries?endpoint=${created.body.id as string}&status=failed`
  await eventually('(call(\'GET\', settled, acme)).body.items.length > 0', async () => (await call('GET', settled, acme)).body.items.length > 0)
  const [delivery] = (await call('GET', settled, acme)).body.items
  t.match(delivery, { status: 'failed', httpStatus: null, errorClass: 'ssrf' }, 'the metadata address is refused')
})

t.test('no portal token reaches the log', async (t) => {
  const { token, url } = await mint('acme')
  await call('GET', '/admin/endpoints', bearer(token))
  await call('GET', '/admin/journal', bearer(token))
  // What a browser asks for when it opens the link: never the fragment.
  await app.inject({ method: 'GET', url: (url.split('#')[0] as string).slice('https://hooks.example'.length) })
  t.ok(logged.length > 10, 'the app logged its requests')
  const signed = token.split('.')[0] as string
  t.same(logged.filter((line) => line.includes(signed.slice(9))), [], 'no line holds the token')
})
