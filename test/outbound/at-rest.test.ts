/**
 * Encryption at rest of what endpoints keep for their receivers (issue 37, contract 5): with a key, signing
 * secrets and custom header values reach PostgreSQL sealed (AES-256-GCM) and deliveries still carry them;
 * values stored before a key was set are read as they are; a list of keys rotates (the first seals, each opens
 * its own); a value under a key no longer given is a clear error; a bad key stops the start in one line that
 * never quotes it, from the plugin's options and from ANVIL_ENCRYPTION_KEY.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { createOutbound, outboundInternals } from '../../src/outbox/outbound.js'
import { encryptionKeys, encryptionKeyProblem } from '../../src/at-rest/encryption-keys.js'
import { loadServeConfig, loadWorkerConfig } from '../../cli/config/load-config.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const OLD = randomBytes(32).toString('base64')
const NEW = randomBytes(32).toString('hex')
const HEADER_VALUE = 'Bearer header-s3cret-value'

const receiver = beforeAll(t, async () => await startReceiver(), async (r) => await r.close())
const plain = beforeAll(t, async () => fixture.open({ queueName: 'at-rest' }))
const sealedOld = beforeAll(t, async () => fixture.open({ queueName: 'at-rest', encryptionKey: OLD }))
const rotated = beforeAll(t, async () => fixture.open({ queueName: 'at-rest', dispatch: { pollIntervalMs: 100 }, encryptionKey: [NEW, OLD] }))
beforeAll(t, async () => {
  const worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(rotated).store, queueName: 'at-rest', allowNets: '127.0.0.0/8', jitter: 0 })
  await Promise.all([worker.start(), rotated.dispatcher.start()])
  return worker
}, async (worker) => await worker.close())

const stored = async (id: string): Promise<{ secret: string, header: string }> => {
  const [row] = await db.query<{ secret: string, header: string }>(
    "SELECT s.secret, e.headers->>'authorization' AS header FROM anvil.endpoints e JOIN anvil.endpoint_secrets s ON s.endpoint_id = e.id WHERE e.id = $1 ORDER BY s.created_at DESC LIMIT 1", [id])
  return row ?? { secret: '', header: '' }
}

t.test('with a key, secrets and header values are stored sealed under the first key; without one, as given', async (t) => {
  const sealed = await rotated.endpoints.create({ url: receiver.url + '/sealed', tenant: 'sealed', headers: { authorization: HEADER_VALUE } })
  const row = await stored(sealed.id)
  t.match(row.secret, /^anvil:enc:v1:[0-9a-f]{8}:/, 'the secret is sealed')
  t.match(row.header, /^anvil:enc:v1:[0-9a-f]{8}:/, 'the header value is sealed')
  t.notOk(JSON.stringify(row).includes(sealed.secret.slice(6)) || JSON.stringify(row).includes(HEADER_VALUE), 'neither is readable there')
  t.equal((await rotated.endpoints.currentSecret(sealed.id)).secret, sealed.secret, 'the reveal opens it')
  const asGiven = await plain.endpoints.create({ url: receiver.url + '/plain', tenant: 'plain', headers: { authorization: HEADER_VALUE } })
  t.same(await stored(asGiven.id), { secret: asGiven.secret, header: HEADER_VALUE }, 'without a key: as given')
})

t.test('deliveries carry the opened values: sealed ones, ones stored before a key was set, and ones under the older key', async (t) => {
  const old = await sealedOld.endpoints.create({ url: receiver.url + '/old', tenant: 'old', headers: { authorization: HEADER_VALUE } })
  for (const tenant of ['sealed', 'plain', 'old']) await rotated.publish({ type: 'order.paid', data: { tenant }, tenant })
  await receiver.waitFor(3)
  for (const tenant of ['sealed', 'plain', 'old']) {
    const got = receiver.received.find((r) => r.url === `/${tenant}`)
    t.equal(got?.headers.authorization, HEADER_VALUE, `${tenant}: the header value`)
    const [endpoint] = (await rotated.endpoints.list({ tenant })).items
    const { secret } = await rotated.endpoints.currentSecret(endpoint?.id ?? '')
    t.match(new Webhook(secret).verify(got?.body ?? '', got?.headers as Record<string, string>), { data: { tenant } }, `${tenant}: signed with the opened secret`)
  }
  const idOf = (value: string): string | undefined => value.split(':')[3]
  const [sealed] = (await rotated.endpoints.list({ tenant: 'sealed' })).items
  const newId = idOf((await stored(sealed?.id ?? '')).secret)
  t.not(idOf((await stored(old.id)).secret), newId, 'sealed under the older key')
  const rotatedSecret = await rotated.endpoints.rotateSecret(old.id, 0)
  t.equal(idOf((await stored(old.id)).secret), newId, 'a rotation seals the new secret under the first key')
  t.equal((await rotated.endpoints.currentSecret(old.id)).secret, rotatedSecret.secret)
  await t.rejects(sealedOld.endpoints.currentSecret(old.id), { code: 'ANVIL_ERR_AT_REST_KEY', message: /not among the configured encryption keys/ }, 'a value under a key no longer given is a clear error')
})

t.test('a bad key stops the start in one line that never quotes it', async (t) => {
  const bad = 'c2hvcnQta2V5'
  t.match(encryptionKeyProblem(bad), /^encryptionKey must be 32 bytes as 64 hex digits or base64/)
  t.match(encryptionKeyProblem([NEW, bad]), /^encryptionKey \(key 2 of 2\) must be/)
  t.equal(encryptionKeyProblem(`${NEW},${OLD}`), undefined)
  t.throws(() => createOutbound({ database: 'postgres://127.0.0.1/none', encryptionKey: bad }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /^Invalid Anvil options: outbound encryptionKey must be/ })
  for (const load of [loadWorkerConfig, loadServeConfig]) {
    try {
      load({ WEBHOOK_SECRET: 'whsec_' + randomBytes(24).toString('base64'), ANVIL_ADMIN_TOKEN: 'admin-token-0123456789', ANVIL_DATABASE_URL: 'postgres://127.0.0.1/anvil', ANVIL_ENCRYPTION_KEY: bad })
      t.fail('refused')
    } catch (err) {
      t.match(err, { code: 'ANVIL_ERR_INVALID_CONFIG', message: /ANVIL_ENCRYPTION_KEY must be 32 bytes/ })
      t.notOk((err as Error).message.includes(bad), 'the key is not quoted')
      t.notOk((err as Error).message.includes('\n'), 'one line')
    }
  }
  t.equal(loadWorkerConfig({ ANVIL_DATABASE_URL: 'postgres://127.0.0.1/anvil', ANVIL_ENCRYPTION_KEY: `${NEW},${OLD}` }).encryptionKey, `${NEW},${OLD}`)
  const keys = encryptionKeys(OLD)
  t.equal(keys?.open(keys.seal('x')), 'x')
  const sealed = keys?.seal('x') ?? ''
  t.throws(() => keys?.open(sealed.slice(0, -4) + 'AAAA'), { code: 'ANVIL_ERR_AT_REST_KEY', message: /does not open/ }, 'a changed value is refused, not read')
})
