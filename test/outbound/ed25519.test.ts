/**
 * Ed25519 signatures, Standard Webhooks `v1a` (issue 37, contract 4): an endpoint created with `signing: 'ed25519'`
 * answers a `whpk_` public key and never its `whsk_` signing key; each delivery to a real receiver carries
 * `v1a,<base64>` over `id.timestamp.body`, checked by a verifier written here on node:crypto (the key imported as
 * JWK, not through Anvil's code) and by the Node and Python recipes of docs/outgoing-webhooks.md as written;
 * rotation signs with both keys for the grace period.
 */
import t from 'tap'
import { Redis } from 'ioredis'
import { execFile } from 'node:child_process'
import { createPublicKey, verify } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { findExecutable } from '../../cli/dev-redis.js'
import { ROOT } from '../helpers/cli.js'
import { adminDelivery, outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver, type Received } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const receiver = beforeAll(t, async () => await startReceiver(), async (r) => await r.close())
const { outbound, app } = adminDelivery(fixture, { queueName: 'ed25519', token: TOKEN })

/** The test's own verifier: which of the `v1a` signatures `publicKey` verifies, over id.timestamp.body. */
function v1aVerifiedBy (publicKey: string, request: Received): boolean[] {
  const x = Buffer.from(publicKey.slice('whpk_'.length), 'base64').toString('base64url')
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' })
  const signed = Buffer.from(`${String(request.headers['webhook-id'])}.${String(request.headers['webhook-timestamp'])}.${request.body}`)
  return String(request.headers['webhook-signature']).split(' ').map((entry) => {
    const [version, signature] = entry.split(',')
    return version === 'v1a' && verify(null, signed, key, Buffer.from(signature ?? '', 'base64'))
  })
}

async function deliveredTo (endpoint: { id: string, tenant: string | null }, data: unknown): Promise<Received> {
  const { messageId } = await outbound.publish({ type: 'order.paid', data, tenant: endpoint.tenant ?? undefined })
  await eventually('the delivery arrives', async () => receiver.received.some((r) => r.headers['webhook-id'] === messageId))
  return receiver.received.find((r) => r.headers['webhook-id'] === messageId) as Received
}

let endpoint: { id: string, tenant: string | null, publicKey: string }

t.test('signing: ed25519 answers a whpk_ public key, never the whsk_ signing key', async (t) => {
  const created = await app.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload: { url: receiver.url + '/ed', tenant: 'ed', signing: 'ed25519' } })
  t.equal(created.statusCode, 201)
  const body = created.json()
  t.equal(body.signing, 'ed25519')
  t.match(body.publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/, '32 bytes of public key')
  t.equal(body.secret, body.publicKey, 'where an HMAC endpoint shows its secret, the public key')
  endpoint = { id: body.id, tenant: 'ed', publicKey: body.publicKey }
  const answers = [created.body]
  for (const url of [`/admin/endpoints/${endpoint.id}`, '/admin/endpoints?tenant=ed', `/admin/endpoints/${endpoint.id}/secret`]) answers.push((await app.inject({ url, headers: auth })).body)
  t.equal(JSON.parse(answers[3] as string).secret, endpoint.publicKey, 'a reveal shows the public key')
  for (const answer of answers) t.notOk(answer.includes('whsk_'), 'no answer holds the signing key')
  const [stored] = await db.query<{ secret: string }>('SELECT secret FROM anvil.endpoint_secrets WHERE endpoint_id = $1', [endpoint.id])
  t.match(stored?.secret, /^whsk_/, 'the signing key is kept server-side')
  const hmac = await outbound.endpoints.create({ url: receiver.url + '/hmac' })
  t.match(hmac, { signing: 'hmac', publicKey: null, secret: /^whsec_/ }, 'HMAC stays the default')

  const stripe = await app.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload: { url: receiver.url + '/x', signing: 'ed25519', scheme: 'stripe' } })
  t.equal(stripe.statusCode, 400, 'Ed25519 with the Stripe-shaped scheme is refused')
  const patch = await app.inject({ method: 'PATCH', url: `/admin/endpoints/${endpoint.id}`, headers: auth, payload: { scheme: 'stripe' } })
  t.equal(patch.statusCode, 400, 'so is a patch to it')
  t.equal((await outbound.endpoints.get(endpoint.id)).scheme, 'standard-webhooks', 'and changes nothing')
  const spec = JSON.stringify((await app.inject({ url: '/admin/openapi.json', headers: auth })).json().paths['/admin/endpoints'])
  t.ok(spec.includes('"signing"') && spec.includes('"publicKey"'), 'the OpenAPI document shows signing and publicKey')
})

t.test('each delivery carries v1a,<base64> over id.timestamp.body, verified with node:crypto; the job holds no key', async (t) => {
  const request = await deliveredTo(endpoint, { n: 1 })
  t.match(request.headers['webhook-signature'], /^v1a,[A-Za-z0-9+/]{86}==$/, 'one 64-byte signature')
  t.same(v1aVerifiedBy(endpoint.publicKey, request), [true])
  t.same(v1aVerifiedBy(endpoint.publicKey, { ...request, body: request.body.replace('1', '2') }), [false], 'a changed body fails')
  const other = (await outbound.endpoints.create({ url: receiver.url + '/other', signing: 'ed25519' })).secret
  t.same(v1aVerifiedBy(other, request), [false], 'another endpoint\'s key fails')
  const client = new Redis(redis.url)
  const job = await client.hgetall(`{anvil}:ed25519:${String(request.headers['webhook-id'])}.${endpoint.id}`)
  await client.quit()
  t.ok(Object.keys(job).length > 0, 'the job is found')
  t.notOk(JSON.stringify(job).includes('whsk_'), 'the job holds no signing key')
})

t.test('rotation: both keys sign during the grace period, then only the new one', async (t) => {
  const old = endpoint.publicKey
  const rotated = await app.inject({ method: 'POST', url: `/admin/endpoints/${endpoint.id}/rotate-secret`, headers: auth, payload: { graceSeconds: 3600 } })
  const fresh = rotated.json().secret as string
  t.match(fresh, /^whpk_/)
  t.not(fresh, old)
  t.equal(rotated.json().publicKey, fresh)
  t.equal((await outbound.endpoints.get(endpoint.id)).publicKey, fresh, 'the endpoint answers the new public key')
  const during = await deliveredTo(endpoint, { n: 2 })
  t.same(v1aVerifiedBy(fresh, during), [true, false], 'the new key signs first')
  t.same(v1aVerifiedBy(old, during), [false, true], 'the old key signs beside it')
  await outbound.endpoints.rotateSecret(endpoint.id, 0)
  const newest = (await outbound.endpoints.get(endpoint.id)).publicKey as string
  const after = await deliveredTo(endpoint, { n: 3 })
  t.same(v1aVerifiedBy(newest, after), [true], 'no grace: the newest key alone')
  t.notOk(v1aVerifiedBy(old, after).some(Boolean), 'the first key no longer signs')
  endpoint.publicKey = newest
})

const page = readFileSync(join(ROOT, 'docs/outgoing-webhooks.md'), 'utf8')
const section = page.slice(page.indexOf('## Ed25519 signatures (v1a)'), page.indexOf('## The event-type catalog'))
const block = (first: string): string => {
  const found = [...section.matchAll(/```\w+\n([\s\S]*?)```/g)].map((m) => m[1] as string).find((code) => code.split('\n')[0]?.includes(first))
  if (found === undefined) throw new Error(`docs/outgoing-webhooks.md has no block starting with ${first}`)
  return found
}
// Beside the repository's node_modules, as the docs' recipe would sit in a project.
const dir = mkdtempSync(join(ROOT, '.verify-ed25519-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('the docs\' Node recipe, as written, accepts a real delivery and refuses a changed one', async (t) => {
  const file = join(dir, 'verify-ed25519.mjs')
  writeFileSync(file, block('verify-ed25519.mjs: '))
  const { verifyWebhookEd25519 } = await import(pathToFileURL(file).href) as { verifyWebhookEd25519: (key: string, headers: unknown, body: string) => unknown }
  const request = await deliveredTo(endpoint, { n: 4 })
  t.match(verifyWebhookEd25519(endpoint.publicKey, request.headers, request.body), { data: { n: 4 } })
  t.throws(() => verifyWebhookEd25519(endpoint.publicKey, request.headers, request.body.replace('4', '5')), /no valid v1a/)
  t.throws(() => verifyWebhookEd25519(endpoint.publicKey, { ...request.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) }, request.body), /timestamp/)
})

const PYTHON = findExecutable('python3')
t.test('the docs\' Python recipe, as written, accepts a real delivery and refuses a changed one', async (t) => {
  // Never skipped: .ci/run installs python3 and its cryptography package; a recipe that is not run is not tested.
  if (PYTHON === undefined) return t.fail('python3 is not on PATH (.ci/run installs it)')
  const file = join(dir, 'verify_ed25519.py')
  writeFileSync(file, block('verify_ed25519.py: ') + `
import sys
case = json.load(sys.stdin)
try:
    print(json.dumps({"ok": verify_webhook_ed25519(case["key"], case["headers"], base64.b64decode(case["body"]))}))
except Exception as error:
    print(json.dumps({"error": str(error)}))
`)
  const run = async (key: string, headers: unknown, body: string): Promise<{ ok?: unknown, error?: string }> => await new Promise((resolve, reject) => {
    const child = execFile(PYTHON, [file], (err, stdout) => err === null ? resolve(JSON.parse(stdout)) : reject(err))
    child.stdin?.end(JSON.stringify({ key, headers, body: Buffer.from(body).toString('base64') }))
  })
  const request = await deliveredTo(endpoint, { n: 6 })
  t.match(await run(endpoint.publicKey, request.headers, request.body), { ok: { data: { n: 6 } } })
  t.match(await run(endpoint.publicKey, request.headers, request.body.replace('6', '7')), { error: /no valid v1a/ })
  t.match(await run(endpoint.publicKey, { ...request.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) }, request.body), { error: /timestamp/ })
})
