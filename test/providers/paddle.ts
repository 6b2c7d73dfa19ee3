import t from 'tap'
import { Paddle } from '@paddle/paddle-node-sdk'
import { TestRedis } from '../helpers/redis.js'
import { conformance, kitHeaders } from '../helpers/providers.js'
import { beforeAll } from '../helpers/before-all.js'

// Paddle's SDK only verifies: requests are signed by the testing kit's signer (`ts=…;h1=` HMAC-SHA256 hex
// of `ts:body`, as documented), and the SDK's `webhooks.isSignatureValid` is shown to accept them.
const [CURRENT, OLDER, WRONG] = ['pdl_ntfset_current', 'pdl_ntfset_older', 'pdl_ntfset_never']
const signPaddle = (secret: string, body: string, ts: number): string =>
  kitHeaders('paddle', { body, secret, timestamp: ts })['paddle-signature'] as string

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const bodyFor = (id: string): string => JSON.stringify({
  event_id: id, event_type: 'transaction.completed', occurred_at: new Date().toISOString(), notification_id: 'ntf_1', data: { id: 'txn_1' }
})

conformance(t, redis, {
  source: { provider: 'paddle', secrets: [CURRENT, OLDER] },
  path: '/paddle',
  signers: [CURRENT, OLDER, WRONG],
  body: bodyFor,
  sign: (body, { signer, timestamp }) => ({ headers: { 'paddle-signature': signPaddle(signer as string, body, timestamp) } }),
  timestamped: true,
  eventType: 'transaction.completed',
  expectedEventId: (id) => id
})

t.test("paddle: the SDK's own verifier accepts the test signer's signature", async (t) => {
  const paddle = new Paddle('pdl_sdbx_apikey_anvil')
  const body = bodyFor('evt_sdk')
  const signature = signPaddle(CURRENT, body, Math.floor(Date.now() / 1000))
  t.equal(await paddle.webhooks.isSignatureValid(body, CURRENT, signature), true)
  t.equal(await paddle.webhooks.isSignatureValid(body, WRONG, signature), false)
})
