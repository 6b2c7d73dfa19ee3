import t from 'tap'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { InteractionResponseType, InteractionType, verifyKey } from 'discord-interactions'
import { TestRedis } from '../helpers/redis.js'
import { conformance, kitHeaders, sourceApp } from '../helpers/providers.js'
import { inspectQueue } from '../helpers/queue.js'
import { beforeAll } from '../helpers/before-all.js'

// discord-interactions only verifies: requests are signed by the testing kit's signer (Ed25519 over
// `timestamp + body`, as Discord documents), and the SDK's verifyKey is shown to accept them.
const pair = (): { privateKey: KeyObject, publicHex: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  return { privateKey, publicHex: publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex') }
}
const [CURRENT, OLDER, WRONG] = [pair(), pair(), pair()]
const signDiscord = (key: KeyObject, ts: number, body: string): Record<string, string> => kitHeaders('discord', { body, secret: key, timestamp: ts })
const now = (): number => Math.floor(Date.now() / 1000)

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

conformance(t, redis, {
  source: { provider: 'discord', secrets: [CURRENT.publicHex, OLDER.publicHex] },
  path: '/discord',
  signers: [CURRENT.privateKey, OLDER.privateKey, WRONG.privateKey],
  body: (id) => JSON.stringify({ id, token: `tok_${id}`, type: InteractionType.APPLICATION_COMMAND, data: { name: 'deploy' } }),
  sign: (body, { signer, timestamp }) => ({ headers: signDiscord(signer as KeyObject, timestamp, body) }),
  timestamped: true,
  // Discord needs an interaction answered within 3 s: "thinking…", while the job runs.
  answer: { statusCode: 200, body: { type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE } },
  eventType: String(InteractionType.APPLICATION_COMMAND),
  expectedEventId: (id) => id
})

t.test('discord: PING is answered with PONG after verification; the probe with a bad signature gets 401', async (t) => {
  const app = await sourceApp(redis.url, 'discord-hs', [{ path: '/d', provider: 'discord', secrets: [CURRENT.publicHex] }])
  const queue = inspectQueue(redis.url, 'discord-hs')
  t.teardown(async () => { await queue.close(); await app.close() })
  const body = JSON.stringify({ id: 'ping_1', token: 'tok_ping', type: InteractionType.PING })
  const headers = signDiscord(CURRENT.privateKey, now(), body)
  t.equal(await verifyKey(body, headers['x-signature-ed25519'] as string, headers['x-signature-timestamp'] as string, CURRENT.publicHex), true, 'the SDK agrees')
  const pong = await app.inject({ method: 'POST', url: '/d', headers: { 'content-type': 'application/json', ...headers }, payload: body })
  t.equal(pong.statusCode, 200)
  t.same(pong.json(), { type: InteractionResponseType.PONG })
  const probe = await app.inject({
    method: 'POST', url: '/d', payload: body,
    headers: { 'content-type': 'application/json', ...headers, 'x-signature-ed25519': '0'.repeat(128) }
  })
  t.equal(probe.statusCode, 401)
  t.equal(await queue.count(), 0, 'nothing enqueued')
})

t.test('discord webhook events: PING (type 0) is answered 204 and not enqueued; events are enqueued and answered 204', async (t) => {
  const app = await sourceApp(redis.url, 'discord-events', [{ path: '/e', provider: 'discord', secrets: [CURRENT.publicHex] }])
  const queue = inspectQueue(redis.url, 'discord-events')
  t.teardown(async () => { await queue.close(); await app.close() })
  const post = async (body: string): Promise<{ statusCode: number, body: string }> => await app.inject({
    method: 'POST', url: '/e', payload: body, headers: { 'content-type': 'application/json', ...signDiscord(CURRENT.privateKey, now(), body) }
  })
  const ping = await post(JSON.stringify({ version: 1, application_id: 'app_1', type: 0 }))
  t.equal(ping.statusCode, 204)
  t.equal(await queue.count(), 0)
  const event = await post(JSON.stringify({ version: 1, application_id: 'app_1', type: 1, event: { type: 'APPLICATION_AUTHORIZED', timestamp: '2026-01-01T00:00:00Z', data: {} } }))
  t.equal(event.statusCode, 204)
  t.equal(event.body, '')
  const [job] = await queue.getJobs()
  t.match(job?.data, { provider: 'discord', eventType: 'APPLICATION_AUTHORIZED' })
})
