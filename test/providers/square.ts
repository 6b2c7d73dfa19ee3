import t from 'tap'
import { WebhooksHelper } from 'square'
import { TestRedis } from '../helpers/redis.js'
import { conformance, kitHeaders } from '../helpers/providers.js'
import { beforeAll } from '../helpers/before-all.js'

// Square's SDK only verifies: requests are signed by the testing kit's signer (base64 HMAC-SHA256 of
// notification URL + body, as documented), and WebhooksHelper.verifySignature is shown to accept them.
const [CURRENT, OLDER, WRONG] = ['sq-current-0123456789', 'sq-older-0123456789', 'sq-never']
const URL = 'https://hooks.anvil.example/square'
const signSquare = (key: string, body: string): string => kitHeaders('square', { body, secret: key, url: URL })['x-square-hmacsha256-signature'] as string
const bodyFor = (id: string): string => JSON.stringify({ merchant_id: 'M1', type: 'payment.updated', event_id: id, data: { id: 'p1' } })

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

conformance(t, redis, {
  source: { provider: 'square', secrets: [CURRENT, OLDER], publicUrl: URL },
  path: '/square',
  signers: [CURRENT, OLDER, WRONG],
  body: bodyFor,
  sign: (body, { signer }) => ({ headers: { 'x-square-hmacsha256-signature': signSquare(signer as string, body) } }),
  timestamped: false,
  eventType: 'payment.updated',
  expectedEventId: (id) => id
})

t.test("square: the SDK's own verifier accepts the test signer's signature", async (t) => {
  const body = bodyFor('evt_sdk')
  t.equal(await WebhooksHelper.verifySignature({ requestBody: body, signatureHeader: signSquare(CURRENT, body), signatureKey: CURRENT, notificationUrl: URL }), true)
  t.equal(await WebhooksHelper.verifySignature({ requestBody: body, signatureHeader: signSquare(WRONG, body), signatureKey: CURRENT, notificationUrl: URL }), false)
})
