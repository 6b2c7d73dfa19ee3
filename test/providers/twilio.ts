import t from 'tap'
import twilio from 'twilio'
import { TestRedis } from '../helpers/redis.js'
import { conformance, sourceApp } from '../helpers/providers.js'
import { beforeAll } from '../helpers/before-all.js'

// Signed by Twilio's own SDK (getExpectedTwilioSignature), and checked with its validateRequest /
// validateRequestWithBody too.
const [CURRENT, OLDER, WRONG] = ['twilio-token-current', 'twilio-token-older', 'twilio-token-never']
const PUBLIC = 'https://hooks.anvil.example/twilio/sms'
const form = (id: string): Record<string, string> => ({ MessageSid: id, From: '+15005550006', To: '+15005550001', Body: 'Hello world & more' })
const encode = (params: Record<string, string>): string => new URLSearchParams(params).toString()

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

conformance(t, redis, {
  source: { provider: 'twilio', secrets: [CURRENT, OLDER], publicUrl: PUBLIC },
  path: '/twilio/sms',
  signers: [CURRENT, OLDER, WRONG],
  body: (id) => encode(form(id)),
  sign: (body, { signer, deliveryId }) => ({
    headers: {
      'x-twilio-signature': twilio.getExpectedTwilioSignature(signer as string, PUBLIC, Object.fromEntries(new URLSearchParams(body))),
      'i-twilio-idempotency-token': deliveryId
    }
  }),
  contentType: 'application/x-www-form-urlencoded',
  timestamped: false,
  eventType: undefined,
  expectedEventId: (_id, delivery) => delivery
})

t.test('twilio: without publicUrl the URL is rebuilt from X-Forwarded-* under trustProxy; JSON bodies via bodySHA256', async (t) => {
  const app = await sourceApp(redis.url, 'twilio-proxy', [{ path: '/tw', provider: 'twilio', secrets: [CURRENT] }], { trustProxy: true })
  t.teardown(() => app.close())
  const params = form('SM_proxy')
  const url = 'https://public.example/tw?shop=1'
  const signature = twilio.getExpectedTwilioSignature(CURRENT, url, params)
  t.equal(twilio.validateRequest(CURRENT, signature, url, params), true, 'the SDK agrees')
  const headers = {
    'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature,
    'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.example'
  }
  t.equal((await app.inject({ method: 'POST', url: '/tw?shop=1', headers, payload: encode(params) })).statusCode, 202)
  const direct = await app.inject({ method: 'POST', url: '/tw?shop=1', headers: { ...headers, 'x-forwarded-host': 'evil.example' }, payload: encode(params) })
  t.equal(direct.statusCode, 401, 'a different host is a different signed URL')

  const json = '{"event":"call.completed","sid":"CA1"}'
  const bodyUrl = `https://public.example/tw?bodySHA256=${twilio.getExpectedBodyHash(json)}`
  const jsonSignature = twilio.getExpectedTwilioSignature(CURRENT, bodyUrl, {})
  t.equal(twilio.validateRequestWithBody(CURRENT, jsonSignature, bodyUrl, json), true, 'the SDK agrees')
  const jsonHeaders = { ...headers, 'content-type': 'application/json', 'x-twilio-signature': jsonSignature }
  const path = bodyUrl.slice('https://public.example'.length)
  t.equal((await app.inject({ method: 'POST', url: path, headers: jsonHeaders, payload: json })).statusCode, 202)
  const tampered = await app.inject({ method: 'POST', url: path, headers: jsonHeaders, payload: json.replace('CA1', 'CA2') })
  t.equal(tampered.statusCode, 401, 'the body must match its signed hash')
})

t.test("twilio: with publicUrl, the request's own query string is appended to it before checking", async (t) => {
  const app = await sourceApp(redis.url, 'twilio-query', [{ path: '/tq', provider: 'twilio', secrets: [CURRENT], publicUrl: PUBLIC }])
  t.teardown(() => app.close())
  const params = form('SM_query')
  const signature = twilio.getExpectedTwilioSignature(CURRENT, `${PUBLIC}?tenant=7`, params)
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }
  t.equal((await app.inject({ method: 'POST', url: '/tq?tenant=7', headers, payload: encode(params) })).statusCode, 202)
  t.equal((await app.inject({ method: 'POST', url: '/tq?tenant=8', headers, payload: encode(params) })).statusCode, 401)
})

t.test('twilio: a Host header that makes no URL is a 401, not a 500', async (t) => {
  const app = await sourceApp(redis.url, 'twilio-bad-host', [{ path: '/tw', provider: 'twilio', secrets: [CURRENT] }])
  t.teardown(() => app.close())
  const res = await app.inject({
    method: 'POST',
    url: '/tw',
    headers: { host: 'bad host:99999', 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'AAAA' },
    payload: encode(form('SM_bad_host'))
  })
  t.equal(res.statusCode, 401)
  t.equal(res.json().code, 'ANVIL_ERR_SIGNATURE_INVALID')
})
