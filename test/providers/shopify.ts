import t from 'tap'
import '@shopify/shopify-api/adapters/node'
import { ApiVersion, shopifyApi } from '@shopify/shopify-api'
import { TestRedis } from '../helpers/redis.js'
import { conformance, kitHeaders } from '../helpers/providers.js'
import { beforeAll } from '../helpers/before-all.js'

// Shopify's SDK has no signer: requests are signed by the testing kit's signer (base64 HMAC-SHA256 of the
// raw body, as documented), and Shopify's own `webhooks.validate` is shown to accept what it produced.
const [CURRENT, OLDER, WRONG] = ['shpss_current-0123456789', 'shpss_older-0123456789', 'shpss_never_listed']
const signShopify = (secret: string, body: string): string => kitHeaders('shopify', { body, secret })['x-shopify-hmac-sha256'] as string

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const headersFor = (body: string, secret: string, eventId: string): Record<string, string> => ({
  'x-shopify-hmac-sha256': signShopify(secret, body),
  'x-shopify-topic': 'orders/create',
  'x-shopify-shop-domain': 'anvil.myshopify.com',
  'x-shopify-api-version': '2025-01',
  'x-shopify-webhook-id': `wh-${eventId}-${secret}`,
  'x-shopify-event-id': eventId,
  'x-shopify-triggered-at': new Date().toISOString()
})

conformance(t, redis, {
  source: { provider: 'shopify', secrets: [CURRENT, OLDER] },
  path: '/shopify',
  signers: [CURRENT, OLDER, WRONG],
  body: (id) => JSON.stringify({ id, admin_graphql_api_id: `gid://shopify/Order/${id}`, total_price: '10.00' }),
  sign: (body, { signer, deliveryId }) => ({ headers: headersFor(body, signer as string, deliveryId) }),
  timestamped: false,
  eventType: 'orders/create',
  expectedEventId: (_id, delivery) => delivery
})

t.test("shopify: the SDK's own validator accepts the test signer's requests", async (t) => {
  const shopify = shopifyApi({
    apiKey: 'key', apiSecretKey: CURRENT, apiVersion: ApiVersion.January25, hostName: 'anvil.example',
    isEmbeddedApp: false, logger: { level: 0, log: async () => {} }
  })
  const body = '{"id":1}'
  const headers = headersFor(body, CURRENT, 'evt-sdk')
  const rawRequest = { headers, method: 'POST', url: '/shopify' }
  const result = await shopify.webhooks.validate({ rawBody: body, rawRequest: rawRequest as never, rawResponse: {} as never })
  t.equal(result.valid, true, JSON.stringify(result))
})
