import t from 'tap'
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { EventWebhook } from '@sendgrid/eventwebhook'
import { TestRedis } from '../helpers/redis.js'
import { conformance } from '../helpers/providers.js'

// @sendgrid/eventwebhook only verifies: requests are signed with ECDSA P-256 / SHA-256 over
// `timestamp + body` (Node's crypto, DER signature in base64, as SendGrid documents), and the SDK's
// verifySignature is shown to accept them. Keys are given as SendGrid shows them: base64 DER.
const pair = (): { privateKey: KeyObject, publicB64: string, publicPem: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return {
    privateKey,
    publicB64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString()
  }
}
const [CURRENT, OLDER, WRONG] = [pair(), pair(), pair()]
const signSendgrid = (key: KeyObject, ts: number, body: string): Record<string, string> => ({
  'x-twilio-email-event-webhook-timestamp': String(ts),
  'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(`${ts}${body}`), key).toString('base64')
})
const bodyFor = (id: string): string => JSON.stringify([
  { email: 'a@example.com', event: 'delivered', sg_event_id: `${id}-b`, timestamp: 1 },
  { email: 'b@example.com', event: 'delivered', sg_event_id: `${id}-a`, timestamp: 1 }
])

const redis = await TestRedis.start()
t.teardown(() => redis.stop())

conformance(t, redis.url, {
  source: { provider: 'sendgrid', secrets: [CURRENT.publicB64, OLDER.publicPem] },
  path: '/sendgrid',
  signers: [CURRENT.privateKey, OLDER.privateKey, WRONG.privateKey],
  body: bodyFor,
  sign: (body, { signer, timestamp }) => ({ headers: signSendgrid(signer as KeyObject, timestamp, body) }),
  timestamped: true,
  eventType: 'delivered',
  expectedEventId: (id) => `${id}-a,${id}-b`
})

t.test("sendgrid: the SDK's own verifier accepts the test signer's signature", async (t) => {
  const webhook = new EventWebhook()
  const body = bodyFor('sg_sdk')
  const ts = Math.floor(Date.now() / 1000)
  const headers = signSendgrid(CURRENT.privateKey, ts, body)
  const key = webhook.convertPublicKeyToECDSA(CURRENT.publicPem)
  t.equal(webhook.verifySignature(key, body, headers['x-twilio-email-event-webhook-signature'] as string, String(ts)), true)
})
