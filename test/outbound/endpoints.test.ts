import t from 'tap'
import { createDeliveryStore } from '../../src/delivery-log/delivery-store.js'
import { openDatabase } from '../../src/db/database.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { outboundInternals } from '../../src/outbox/outbound.js'

const fixture = outboundFixture()
const { db } = fixture
const outbound = beforeAll(t, async () => fixture.open())

t.test('create: a whsec_ secret of 32 random bytes, shown only here; get and list never show it', async (t) => {
  const created = await outbound.endpoints.create({ url: 'https://hooks.example/in', tenant: 't1', eventTypes: ['a.b'], description: 'first', rateLimit: 5 })
  t.match(created, {
    id: /^ep_[0-9a-f]{28}$/, url: 'https://hooks.example/in', tenant: 't1', eventTypes: ['a.b'], description: 'first', enabled: true,
    disabledReason: null, scheme: 'standard-webhooks', rateLimit: 5, lastDeliveryAt: null, lastDeliveryStatus: null, failingSince: null
  })
  t.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  t.equal(Buffer.from(created.secret.slice(6), 'base64').length, 32)
  const other = await outbound.endpoints.create({ url: 'http://hooks.example/2' })
  t.not(other.secret, created.secret, 'every endpoint has its own secret')
  const got = await outbound.endpoints.get(created.id)
  t.equal((got as { secret?: string }).secret, undefined)
  const { secret: _secret, ...shown } = created
  t.same(got, shown)
  t.same(await outboundInternals(outbound).store.loadSecrets(created.id), [created.secret])
  await t.rejects(outbound.endpoints.get('ep_nope'), { code: 'ANVIL_ERR_NOT_FOUND', statusCode: 404 })
})

t.test('list: cursor paging in creation order, filtered by tenant', async (t) => {
  const made = []
  for (let i = 0; i < 5; i++) made.push((await outbound.endpoints.create({ url: `https://p${i}.example/`, tenant: 'paged' })).id)
  const seen: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = await outbound.endpoints.list({ tenant: 'paged', limit: 2, ...(cursor === undefined ? {} : { cursor }) })
    seen.push(...page.items.map((e) => e.id))
    cursor = page.next ?? undefined
    pages++
  } while (cursor !== undefined)
  t.same(seen, made)
  t.equal(pages, 3)
  await t.rejects(outbound.endpoints.list({ cursor: 'garbage' }), { code: 'ANVIL_ERR_BAD_REQUEST' })
})

t.test('patch and delete', async (t) => {
  const endpoint = await outbound.endpoints.create({ url: 'https://patch.example/', rateLimit: 3, tenant: 'x' })
  const patched = await outbound.endpoints.update(endpoint.id, { url: 'https://patched.example/', rateLimit: null, tenant: null, scheme: 'stripe', eventTypes: ['c.d'] })
  t.match(patched, { url: 'https://patched.example/', rateLimit: null, tenant: null, scheme: 'stripe', eventTypes: ['c.d'] })
  t.ok(patched.updatedAt >= endpoint.updatedAt)
  const off = await outbound.endpoints.update(endpoint.id, { enabled: false })
  t.match(off, { enabled: false, disabledReason: 'disabled by an operator' })
  await db.query('UPDATE anvil.endpoints SET failing_since = now() WHERE id = $1', [endpoint.id])
  t.match(await outbound.endpoints.update(endpoint.id, { enabled: true }), { enabled: true, disabledReason: null, failingSince: null })
  await t.rejects(outbound.endpoints.update(endpoint.id, {}), { code: 'ANVIL_ERR_INVALID_ENDPOINT' })
  await t.rejects(outbound.endpoints.update(endpoint.id, { url: 'ftp://x' }), { code: 'ANVIL_ERR_INVALID_ENDPOINT', message: /url must be http or https/ })
  await t.rejects(outbound.endpoints.update('ep_gone', { enabled: true }), { code: 'ANVIL_ERR_NOT_FOUND' })
  await outbound.endpoints.remove(endpoint.id)
  await t.rejects(outbound.endpoints.get(endpoint.id), { code: 'ANVIL_ERR_NOT_FOUND' })
  await t.rejects(outbound.endpoints.remove(endpoint.id), { code: 'ANVIL_ERR_NOT_FOUND' })
  t.same(await db.query('SELECT 1 FROM anvil.endpoint_secrets WHERE endpoint_id = $1', [endpoint.id]), [], 'its secrets went with it')
  t.same(await outboundInternals(outbound).store.loadSecrets(endpoint.id), [])
})

t.test('URL rules: http(s), no credentials, at most 2 KiB, https only as an option', async (t) => {
  for (const [url, message] of [
    ['ftp://x.example/', /url must be http or https/],
    ['javascript:alert(1)', /url must be http or https/],
    ['https://user:pw@x.example/', /url must not carry credentials/],
    ['https://user@x.example/', /url must not carry credentials/],
    ['not a url', /url must be an absolute http\(s\) URL/],
    [`https://x.example/${'a'.repeat(2048)}`, /url/]
  ] as const) {
    await t.rejects(outbound.endpoints.create({ url }), { code: 'ANVIL_ERR_INVALID_ENDPOINT', statusCode: 400, message }, url.slice(0, 40))
  }
  t.ok(await outbound.endpoints.create({ url: 'https://ok.example/path?q=1' }))
  await t.rejects(outbound.endpoints.create({ url: 'https://x.example/', eventTypes: ['bad type'] }), { message: /eventTypes.0 must be an event type name/ })
  await t.rejects(outbound.endpoints.create({ url: 'https://x.example/', rateLimit: 0 }), { message: /rateLimit/ })
  await t.rejects(outbound.endpoints.create({ url: 'https://x.example/', secret: 'mine' } as never), { message: /secret/ })
  const strict = fixture.open({ httpsOnly: true })
  await t.rejects(strict.endpoints.create({ url: 'http://x.example/' }), { message: /must be https/ })
  t.ok(await strict.endpoints.create({ url: 'https://x.example/' }))
})

t.test('rotation: the old secret signs beside the new one for the grace period', async (t) => {
  const endpoint = await outbound.endpoints.create({ url: 'https://rotate.example/' })
  const rotated = await outbound.endpoints.rotateSecret(endpoint.id)
  t.not(rotated.secret, endpoint.secret)
  t.equal(rotated.id, endpoint.id)
  t.same(await outboundInternals(outbound).store.loadSecrets(endpoint.id), [rotated.secret, endpoint.secret], 'both live, newest first')
  const [grace] = await db.query<{ hours: number }>(
    'SELECT extract(epoch FROM expires_at - now())::float8 / 3600 AS hours FROM anvil.endpoint_secrets WHERE secret = $1', [endpoint.secret])
  t.ok(grace !== undefined && grace.hours > 23.9 && grace.hours <= 24, `24 h of grace by default (${grace?.hours})`)
  const third = await outbound.endpoints.rotateSecret(endpoint.id, 0)
  t.same(await outboundInternals(outbound).store.loadSecrets(endpoint.id), [third.secret], 'a rotation with no grace retires every older secret at once')
  await outbound.endpoints.rotateSecret(endpoint.id, 60)
  t.same((await db.query('SELECT count(*)::int AS n FROM anvil.endpoint_secrets WHERE endpoint_id = $1', [endpoint.id]))[0], { n: 2 }, 'expired secrets are deleted on the next rotation')
  await t.rejects(outbound.endpoints.rotateSecret('ep_gone'), { code: 'ANVIL_ERR_NOT_FOUND' })
  await t.rejects(outbound.endpoints.rotateSecret(endpoint.id, -1), { code: 'ANVIL_ERR_INVALID_ENDPOINT' })
})

t.test('the delivery store: secrets cached briefly, attempts logged with the endpoint\'s last delivery, disable once', async (t) => {
  const endpoint = await outbound.endpoints.create({ url: 'https://store.example/', rateLimit: 9, scheme: 'stripe' })
  const database = openDatabase(db.url)
  t.teardown(async () => await database.close())
  const worker = createDeliveryStore(database, { secretCacheMs: 60_000 })
  t.same(await worker.loadEndpoint(endpoint.id), { enabled: true, scheme: 'stripe', rateLimit: 9, headers: {}, secrets: [endpoint.secret] })
  const rotated = await outbound.endpoints.rotateSecret(endpoint.id)
  t.same(await worker.loadSecrets(endpoint.id), [endpoint.secret], 'another process sees the rotation when its cache ends')
  worker.forget(endpoint.id)
  t.same(await worker.loadSecrets(endpoint.id), [rotated.secret, endpoint.secret])
  t.equal(await worker.loadEndpoint('ep_gone'), undefined)

  const failed = await worker.recordAttempt({
    messageId: 'm1', endpointId: endpoint.id, attempt: 1, httpStatus: 500, durationMs: 12.6, errorClass: 'HttpError',
    errorMessage: 'HTTP 500', responseHead: 'é'.repeat(3000), payloadSha256: 'ab'.repeat(32), success: false
  })
  t.match(failed, { deliveryId: /^\d+$/, failingSince: Date })
  const [row] = await db.query<{ response_head: string, duration_ms: number, status: string }>('SELECT * FROM anvil.deliveries WHERE id = $1', [failed.deliveryId])
  t.equal(Buffer.byteLength(row?.response_head ?? ''), 4096, 'the response head is cut to 4 KiB, on a character boundary')
  t.equal(row?.duration_ms, 13)
  t.match(await outbound.endpoints.get(endpoint.id), { lastDeliveryStatus: 'failed', lastDeliveryAt: String, failingSince: String })
  const again = await worker.recordAttempt({ messageId: 'm1', endpointId: endpoint.id, attempt: 2, durationMs: 3, errorClass: 'TimeoutError', responseHead: '', payloadSha256: 'x', success: false })
  t.same(again.failingSince, failed.failingSince, 'the failing clock starts at the first failure')
  const ok = await worker.recordAttempt({ messageId: 'm1', endpointId: endpoint.id, attempt: 3, httpStatus: 204, durationMs: 3, responseHead: '', payloadSha256: 'x', success: true })
  t.equal(ok.failingSince, null, 'a success stops it')
  t.match(await outbound.endpoints.get(endpoint.id), { lastDeliveryStatus: 'success', failingSince: null })

  t.equal(await worker.disableEndpoint(endpoint.id, 'gone (410)'), true)
  t.equal(await worker.disableEndpoint(endpoint.id, 'gone (410)'), false, 'only the first call disables')
  t.match(await outbound.endpoints.get(endpoint.id), { enabled: false, disabledReason: 'gone (410)' })
  t.match(await worker.loadEndpoint(endpoint.id), { enabled: false })
})
