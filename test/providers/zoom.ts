import t from 'tap'
import { createHmac } from 'node:crypto'
import { payloadKey } from '../../src/inbound/idempotency.js'
import { TestRedis } from '../helpers/redis.js'
import { conformance, kitHeaders, sourceApp } from '../helpers/providers.js'
import { inspectQueue } from '../helpers/queue.js'
import { beforeAll } from '../helpers/before-all.js'

// Zoom ships no webhook SDK: requests are signed by the testing kit's signer, the documented algorithm
// (`v0=` hex HMAC-SHA256 of `v0:<ts>:<body>` with the secret token). Zoom sends no event id: the key is the body's hash.
const [CURRENT, OLDER, WRONG] = ['zoom-current-0123456789', 'zoom-older-0123456789', 'zoom-never']
const signZoom = (secret: string, ts: number, body: string): Record<string, string> => kitHeaders('zoom', { body, secret, timestamp: ts })

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

conformance(t, redis, {
  source: { provider: 'zoom', secrets: [CURRENT, OLDER] },
  path: '/zoom',
  signers: [CURRENT, OLDER, WRONG],
  body: (id) => JSON.stringify({ event: 'meeting.started', event_ts: 1700000000000, payload: { object: { uuid: id } } }),
  sign: (body, { signer, timestamp }) => ({ headers: signZoom(signer as string, timestamp, body) }),
  timestamped: true,
  eventType: 'meeting.started',
  expectedEventId: () => undefined
})

t.test('zoom: endpoint.url_validation is answered with the token encrypted by the secret that verified it', async (t) => {
  const app = await sourceApp(redis.url, 'zoom-hs', [{ path: '/z', provider: 'zoom', secrets: [CURRENT, OLDER] }])
  const queue = inspectQueue(redis.url, 'zoom-hs')
  t.teardown(async () => { await queue.close(); await app.close() })
  const body = JSON.stringify({ event: 'endpoint.url_validation', payload: { plainToken: 'plain_abc' }, event_ts: 1 })
  const res = await app.inject({ method: 'POST', url: '/z', headers: { 'content-type': 'application/json', ...signZoom(OLDER, Math.floor(Date.now() / 1000), body) }, payload: body })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { plainToken: 'plain_abc', encryptedToken: createHmac('sha256', OLDER).update('plain_abc').digest('hex') })
  t.equal(await queue.count(), 0)
  const job = await app.inject({ method: 'POST', url: '/z', headers: { 'content-type': 'application/json', ...signZoom(CURRENT, Math.floor(Date.now() / 1000), '{"event":"x"}') }, payload: '{"event":"x"}' })
  t.equal((await queue.getJob(job.json().jobId))?.data.key, payloadKey('zoom', Buffer.from('{"event":"x"}')), 'keyed on the body')
})
