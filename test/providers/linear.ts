import t from 'tap'
import { LinearWebhookClient } from '@linear/sdk/webhooks'
import { TestRedis } from '../helpers/redis.js'
import { conformance, kitHeaders } from '../helpers/providers.js'
import { beforeAll } from '../helpers/before-all.js'

// Linear's SDK only verifies: requests are signed by the testing kit's signer (hex HMAC-SHA256 of the raw
// body, whose `webhookTimestamp` is the signed timestamp, as documented), and LinearWebhookClient#verify accepts them.
const [CURRENT, OLDER, WRONG] = ['lin_wh_current-0123456789', 'lin_wh_older-0123456789', 'lin_wh_never']
// The body already holds its webhookTimestamp, and no timestamp is given: the kit signs it as it is.
const signLinear = (secret: string, body: string): string => kitHeaders('linear', { body, secret })['linear-signature'] as string
const bodyAt = (id: string, timestamp: number): string =>
  JSON.stringify({ action: 'create', type: 'Issue', data: { id }, webhookTimestamp: timestamp * 1000, webhookId: 'wh_1' })

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

conformance(t, redis, {
  source: { provider: 'linear', secrets: [CURRENT, OLDER] },
  path: '/linear',
  signers: [CURRENT, OLDER, WRONG],
  // The timestamp lives in the body, so the body is made at signing time.
  body: (id) => id,
  sign: (id, { signer, timestamp, deliveryId }) => {
    const body = bodyAt(id, timestamp)
    return { headers: { 'linear-signature': signLinear(signer as string, body), 'linear-delivery': deliveryId, 'linear-event': 'Issue' }, payload: body }
  },
  timestamped: true,
  eventType: 'Issue',
  expectedEventId: (_id, delivery) => delivery
})

t.test('linear: the SDK verifier accepts what the test signer produced', async (t) => {
  const client = new LinearWebhookClient(CURRENT)
  const body = bodyAt('iss_sdk', Math.floor(Date.now() / 1000))
  t.equal(client.verify(Buffer.from(body), signLinear(CURRENT, body)), true)
  t.throws(() => client.verify(Buffer.from(body), signLinear(WRONG, body)))
})
