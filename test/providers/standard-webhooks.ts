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

/** The conformance spec for one header family, signed by that family's SDK. */
const signedWith = (prefix: 'webhook' | 'svix', Sdk: typeof StandardWebhook | typeof SvixWebhook, path: string, name?: string): Parameters<typeof conformance>[2] => ({
  source: { provider: 'standard-webhooks', secrets: [CURRENT, OLDER], ...(name === undefined ? {} : { name }) },
  path,
  signers: [CURRENT, OLDER, WRONG],
  body: bodyFor,
  sign: (body, { signer, timestamp, deliveryId }) => ({
    headers: {
      [`${prefix}-id`]: deliveryId,
      [`${prefix}-timestamp`]: String(timestamp),
      [`${prefix}-signature`]: new Sdk(signer as string).sign(deliveryId, new Date(timestamp * 1000), body)
    }
  }),
  timestamped: true,
  eventType: 'user.created',
  expectedEventId: (_id, delivery) => delivery
})

t.test('standard-webhooks headers', async (t) => {
  conformance(t, redis, signedWith('webhook', StandardWebhook, '/standard'))
})

t.test('svix-* headers (Clerk, Resend)', async (t) => {
  conformance(t, redis, signedWith('svix', SvixWebhook, '/clerk', 'clerk'))
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
