import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { signatureHeaders } from '../../src/send/sign-outbound.js'
import { standardWebhooksScheme } from '../../src/providers/standard-webhooks.js'
import { stripeScheme } from '../../src/providers/stripe.js'

const newSecret = (): string => 'whsec_' + randomBytes(32).toString('base64')
const oldSecret = newSecret()
const currentSecret = newSecret()
const timestamp = Math.floor(Date.now() / 1000)
const body = JSON.stringify({ id: 'msg_1', type: 'invoice.paid', timestamp: new Date(timestamp * 1000).toISOString(), data: { amount: 5, note: 'é ✓' } })
const input = { id: 'msg_1', type: 'invoice.paid', timestamp, body, secrets: [currentSecret, oldSecret] }

t.test('Standard Webhooks: every live secret signs, and the standardwebhooks package verifies each', async (t) => {
  const headers = signatureHeaders({ ...input, scheme: 'standard-webhooks' })
  t.equal(headers['webhook-id'], 'msg_1')
  t.equal(headers['webhook-timestamp'], String(timestamp))
  t.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/)
  for (const secret of [currentSecret, oldSecret]) t.same(new Webhook(secret).verify(body, headers), JSON.parse(body))
  t.throws(() => new Webhook(newSecret()).verify(body, headers), 'a secret that is not live fails')
  t.throws(() => new Webhook(currentSecret).verify(body + ' ', headers), 'a changed body fails')
})

t.test("Standard Webhooks: Anvil's own inbound preset verifies with either secret", async (t) => {
  const headers = signatureHeaders({ ...input, scheme: 'standard-webhooks' })
  for (const secret of [currentSecret, oldSecret]) {
    const verified = standardWebhooksScheme({ secrets: [secret], toleranceSeconds: 300 }).verify(Buffer.from(body), headers)
    t.match(verified, { eventId: 'msg_1', eventType: 'invoice.paid', timestamp })
  }
  t.throws(() => standardWebhooksScheme({ secrets: [newSecret()], toleranceSeconds: 300 }).verify(Buffer.from(body), headers),
    { code: 'ANVIL_ERR_SIGNATURE_INVALID' })
})

t.test('the Stripe-shaped scheme: X-Webhook-Signature t=…,v1=… verified by Stripe\'s library and the stripe preset', async (t) => {
  const headers = signatureHeaders({ ...input, scheme: 'stripe' })
  t.match(headers['x-webhook-signature'], new RegExp(`^t=${timestamp},v1=[0-9a-f]{64},v1=[0-9a-f]{64}$`))
  t.equal(headers['x-webhook-event'], 'invoice.paid')
  t.equal(headers['x-webhook-timestamp'], String(timestamp))
  const stripe = new Stripe('sk_test_unused')
  for (const secret of [currentSecret, oldSecret]) {
    t.match(stripe.webhooks.constructEvent(body, headers['x-webhook-signature'] as string, secret), { id: 'msg_1', type: 'invoice.paid' })
    const verified = stripeScheme({ secrets: [secret], toleranceSeconds: 300 }).verify(Buffer.from(body), { 'stripe-signature': headers['x-webhook-signature'] })
    t.match(verified, { eventId: 'msg_1', eventType: 'invoice.paid', timestamp })
  }
  t.throws(() => stripe.webhooks.constructEvent(body, headers['x-webhook-signature'] as string, newSecret()))
})

t.test('no secret, no signature', async (t) => {
  t.throws(() => signatureHeaders({ ...input, secrets: [], scheme: 'standard-webhooks' }), /at least one secret/)
})
