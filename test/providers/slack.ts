import t from 'tap'
import { TestRedis } from '../helpers/redis.js'
import { conformance, kitHeaders, sourceApp } from '../helpers/providers.js'
import { inspectQueue } from '../helpers/queue.js'
import { beforeAll } from '../helpers/before-all.js'

// Slack publishes no verifier in an SDK of this list: requests are signed by the testing kit's signer, the
// documented algorithm (`v0=` hex HMAC-SHA256 of `v0:<ts>:<body>`).
const [CURRENT, OLDER, WRONG] = ['slack-current-0123456789', 'slack-older-0123456789', 'slack-never']
const signSlack = (secret: string, ts: number, body: string): Record<string, string> => kitHeaders('slack', { body, secret, timestamp: ts })
const now = (): number => Math.floor(Date.now() / 1000)

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

conformance(t, redis, {
  source: { provider: 'slack', secrets: [CURRENT, OLDER] },
  path: '/slack',
  signers: [CURRENT, OLDER, WRONG],
  body: (id) => JSON.stringify({ type: 'event_callback', event_id: id, event: { type: 'app_mention', text: 'hi' } }),
  sign: (body, { signer, timestamp }) => ({ headers: signSlack(signer as string, timestamp, body) }),
  timestamped: true,
  eventType: 'app_mention',
  expectedEventId: (id) => id
})

t.test('slack: url_verification is answered after verification and never enqueued; slash commands (forms) verify', async (t) => {
  const app = await sourceApp(redis.url, 'slack-hs', [{ path: '/s', provider: 'slack', secrets: [CURRENT] }])
  const queue = inspectQueue(redis.url, 'slack-hs')
  t.teardown(async () => { await queue.close(); await app.close() })
  const body = JSON.stringify({ token: 'x', challenge: 'chal_123', type: 'url_verification' })
  const res = await app.inject({ method: 'POST', url: '/s', headers: { 'content-type': 'application/json', ...signSlack(CURRENT, now(), body) }, payload: body })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { challenge: 'chal_123' })
  const forged = await app.inject({ method: 'POST', url: '/s', headers: { 'content-type': 'application/json', ...signSlack(WRONG, now(), body) }, payload: body })
  t.equal(forged.statusCode, 401, 'a handshake is answered only after verification')
  t.equal(await queue.count(), 0, 'no handshake was enqueued')

  const command = 'command=%2Fdeploy&text=prod&team_id=T1'
  const cmd = await app.inject({ method: 'POST', url: '/s', headers: { 'content-type': 'application/x-www-form-urlencoded', ...signSlack(CURRENT, now(), command) }, payload: command })
  t.equal(cmd.statusCode, 202)
  t.equal((await queue.getJob(cmd.json().jobId))?.data.eventType, 'slash_command')
})
