import t from 'tap'
import Stripe from 'stripe'
import { TestRedis } from '../helpers/redis.js'
import { conformance } from '../helpers/providers.js'
import { beforeAll } from '../helpers/before-all.js'

// Signed by Stripe's own SDK (generateTestHeaderString), and checked by its constructEvent too.
const stripe = new Stripe('sk_test_anvil')
const [CURRENT, OLDER, WRONG] = ['whsec_current-0123456789', 'whsec_older-0123456789', 'whsec_never_listed']

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const sign = (body: string, signer: unknown, timestamp: number): string =>
  stripe.webhooks.generateTestHeaderString({ payload: body, secret: signer as string, timestamp })

conformance(t, redis, {
  source: { provider: 'stripe', secrets: [CURRENT, OLDER] },
  path: '/stripe',
  signers: [CURRENT, OLDER, WRONG],
  body: (id) => JSON.stringify({ id, object: 'event', type: 'charge.succeeded', data: { object: { id: 'ch_1' } } }),
  sign: (body, { signer, timestamp }) => ({ headers: { 'stripe-signature': sign(body, signer, timestamp) } }),
  timestamped: true,
  eventType: 'charge.succeeded',
  expectedEventId: (id) => id
})

t.test('stripe: a header with one v1 per secret (Stripe while rolling) is accepted when any matches', async (t) => {
  const { stripeScheme } = await import('../../src/providers/stripe.js')
  const scheme = stripeScheme({ secrets: [CURRENT], toleranceSeconds: 300 })
  const body = JSON.stringify({ id: 'evt_roll', type: 'invoice.paid' })
  const ts = Math.floor(Date.now() / 1000)
  const other = sign(body, WRONG, ts).split(',')[1] as string
  const header = `t=${ts},${other},${sign(body, CURRENT, ts).split(',')[1] as string}`
  t.match(scheme.verify(Buffer.from(body), { 'stripe-signature': header }), { eventId: 'evt_roll', eventType: 'invoice.paid', timestamp: ts })
  // Stripe's own verifier agrees with what Anvil accepted.
  t.equal(stripe.webhooks.constructEvent(body, header, CURRENT).id, 'evt_roll')
  t.throws(() => scheme.verify(Buffer.from(body), { 'stripe-signature': `t=${ts}` }), { code: 'ANVIL_ERR_SIGNATURE_MALFORMED' })
  t.throws(() => scheme.verify(Buffer.from(body), {}), { code: 'ANVIL_ERR_SIGNATURE_MISSING' })
})

t.test('stripe: tolerance is configurable, and 0 turns it off', async (t) => {
  const { stripeScheme } = await import('../../src/providers/stripe.js')
  const body = '{"id":"evt_old","type":"x"}'
  const old = Math.floor(Date.now() / 1000) - 3600
  const header = sign(body, CURRENT, old)
  t.throws(() => stripeScheme({ secrets: [CURRENT], toleranceSeconds: 600 }).verify(Buffer.from(body), { 'stripe-signature': header }), { code: 'ANVIL_ERR_STALE' })
  t.ok(stripeScheme({ secrets: [CURRENT], toleranceSeconds: 7200 }).verify(Buffer.from(body), { 'stripe-signature': header }))
  t.ok(stripeScheme({ secrets: [CURRENT], toleranceSeconds: 0 }).verify(Buffer.from(body), { 'stripe-signature': header }))
})
