import t from 'tap'
import { sign, verify } from '@octokit/webhooks-methods'
import { TestRedis } from '../helpers/redis.js'
import { conformance, sourceApp } from '../helpers/providers.js'
import { beforeAll } from '../helpers/before-all.js'

// Signed by Octokit's own signer (@octokit/webhooks-methods `sign`), and checked by its `verify` too.
const [CURRENT, OLDER, WRONG] = ['gh-current-0123456789', 'gh-older-0123456789', 'gh-never-listed']
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

conformance(t, redis, {
  source: { provider: 'github', secrets: [CURRENT, OLDER] },
  path: '/github',
  signers: [CURRENT, OLDER, WRONG],
  body: (id) => JSON.stringify({ action: 'opened', pull_request: { id }, repository: { full_name: 'anvil/anvil' } }),
  sign: async (body, { signer, deliveryId }) => ({
    headers: { 'x-hub-signature-256': await sign(signer as string, body), 'x-github-delivery': deliveryId, 'x-github-event': 'pull_request' }
  }),
  timestamped: false,
  eventType: 'pull_request',
  expectedEventId: (_id, delivery) => delivery
})

t.test('github: the SDK verifier agrees; form-encoded hooks are checked on the form bytes; SHA-1 alone is refused', async (t) => {
  const app = await sourceApp(redis.url, 'gh-form', [{ path: '/gh', provider: 'github', secrets: [CURRENT] }])
  t.teardown(() => app.close())
  const form = 'payload=' + encodeURIComponent('{"zen":"Keep it logically awesome."}')
  const signature = await sign(CURRENT, form)
  t.ok(await verify(CURRENT, form, signature), 'Octokit verifies what it signed')
  const ok = await app.inject({
    method: 'POST', url: '/gh', payload: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-hub-signature-256': signature, 'x-github-delivery': 'd-form', 'x-github-event': 'ping' }
  })
  t.equal(ok.statusCode, 202)
  const legacy = await app.inject({
    method: 'POST', url: '/gh', payload: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-hub-signature': 'sha1=' + '0'.repeat(40) }
  })
  t.equal(legacy.json().code, 'ANVIL_ERR_SIGNATURE_MISSING')
})
