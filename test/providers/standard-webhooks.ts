import t from 'tap'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'
import { TestRedis } from '../helpers/redis.js'
import { conformance, sourceApp } from '../helpers/providers.js'
import { beforeAll } from '../helpers/before-all.js'

// Signed by the standardwebhooks SDK's own `sign` (webhook-* headers), and by Svix's (svix-* headers,
// as Clerk and Resend send them).
const key = (fill: string): string => 'whsec_' + Buffer.alloc(24, fill).toString('base64')
const [CURRENT, OLDER, WRONG] = [key('c'), key('o'), key('w')]
const bodyFor = (id: string): string => JSON.stringify({ type: 'user.created', data: { id } })

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

t.test('standard-webhooks headers', async (t) => {
  conformance(t, redis, {
    source: { provider: 'standard-webhooks', secrets: [CURRENT, OLDER] },
    path: '/standard',
    signers: [CURRENT, OLDER, WRONG],
    body: bodyFor,
    sign: (body, { signer, timestamp, deliveryId }) => ({
      headers: {
        'webhook-id': deliveryId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': new StandardWebhook(signer as string).sign(deliveryId, new Date(timestamp * 1000), body)
      }
    }),
    timestamped: true,
    eventType: 'user.created',
    expectedEventId: (_id, delivery) => delivery
  })
})

t.test('svix-* headers (Clerk, Resend)', async (t) => {
  conformance(t, redis, {
    source: { provider: 'standard-webhooks', secrets: [CURRENT, OLDER], name: 'clerk' },
    path: '/clerk',
    signers: [CURRENT, OLDER, WRONG],
    body: bodyFor,
    sign: (body, { signer, timestamp, deliveryId }) => ({
      headers: {
        'svix-id': deliveryId,
        'svix-timestamp': String(timestamp),
        'svix-signature': new SvixWebhook(signer as string).sign(deliveryId, new Date(timestamp * 1000), body)
      }
    }),
    timestamped: true,
    eventType: 'user.created',
    expectedEventId: (_id, delivery) => delivery
  })
})

t.test('standard-webhooks: several space-separated signatures, any may match; the SDK verifies what Anvil accepts', async (t) => {
  const app = await sourceApp(redis.url, 'std-multi', [{ path: '/std', provider: 'standard-webhooks', secrets: [CURRENT] }])
  t.teardown(() => app.close())
  const body = bodyFor('u_multi')
  const ts = new Date()
  const signature = `${new StandardWebhook(WRONG).sign('msg_multi', ts, body)} ${new StandardWebhook(CURRENT).sign('msg_multi', ts, body)}`
  const headers = { 'webhook-id': 'msg_multi', 'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)), 'webhook-signature': signature }
  t.same(new StandardWebhook(CURRENT).verify(body, headers), JSON.parse(body))
  const res = await app.inject({ method: 'POST', url: '/std', headers: { ...headers, 'content-type': 'application/json' }, payload: body })
  t.equal(res.statusCode, 202)
})
