import t, { type Test } from 'tap'
import { createHmac } from 'node:crypto'
import { sign } from '@octokit/webhooks-methods'
import Stripe from 'stripe'
import type { FastifyInstance } from 'fastify'
import { buildGithubService } from '../../examples/github.js'
import { buildShopifyService } from '../../examples/shopify.js'
import { buildStripeService, type ExampleOptions } from '../../examples/stripe.js'
import type { WebhookEvent } from '../../index.js'
import { fixture } from '../../testing/index.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

// docs/providers.md's three provider examples, run as written: a signed delivery (signed by the provider's own SDK
// where it has a signer) reaches the handler with its provider, type and event id, the typed handlers of the
// Stripe and GitHub examples read their payloads, and the provider's redelivery makes no second job.
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const reports: Array<Record<string, unknown>> = []

async function run (t: Test, build: (o: ExampleOptions) => Promise<FastifyInstance>, queueName: string,
  request: () => Promise<{ url: string, headers: Record<string, string>, payload: string }>): Promise<WebhookEvent> {
  let arrived: (event: WebhookEvent) => void = () => {}
  const handled = new Promise<WebhookEvent>((resolve) => { arrived = resolve })
  const app = await build({ redisUrl: redis.url, secrets: ['old-secret-0123456789', 'current-secret-0123456789'], queueName, onEvent: (e) => arrived(e), report: (fields) => reports.push(fields) })
  app.log.level = 'silent'
  t.teardown(() => app.close())
  await app.ready()
  const first = await app.inject({ method: 'POST', ...await request() })
  const again = await app.inject({ method: 'POST', ...await request() })
  t.equal(first.statusCode, 202)
  t.same([first.json().replayed, again.json().replayed], [false, true])
  t.equal(again.json().jobId, first.json().jobId)
  return await handled
}

t.test('examples/stripe.ts', async (t) => {
  const stripe = new Stripe('sk_test_anvil')
  const body = JSON.stringify(fixture('stripe', 'checkout.session.completed', { overrides: { id: 'evt_ex', data: { object: { id: 'cs_1' } } } }).body)
  const event = await run(t, buildStripeService, 'ex-stripe', async () => ({
    url: '/webhooks/stripe', payload: body,
    headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'current-secret-0123456789' }) }
  }))
  t.match(event, { provider: 'stripe', eventType: 'checkout.session.completed', eventId: 'evt_ex' })
  t.same(reports.filter((r) => r.fulfil === 'cs_1'), [{ fulfil: 'cs_1', amount: 2000, email: 'jenny.rosen@example.com' }], 'the typed handler ran once')
})

t.test('examples/github.ts', async (t) => {
  const body = JSON.stringify(fixture('github', 'pull_request.opened', { overrides: { number: 7, pull_request: { number: 7 } } }).body)
  const event = await run(t, buildGithubService, 'ex-github', async () => ({
    url: '/webhooks/github', payload: body,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': await sign('current-secret-0123456789', body), 'x-github-event': 'pull_request', 'x-github-delivery': 'dlv-7' }
  }))
  t.match(event, { provider: 'github', eventType: 'pull_request', eventId: 'dlv-7' })
  t.same(reports.filter((r) => r.review === 7 || r.pullRequest === 7), [
    { review: 7, title: 'Align the widgets', author: 'octocat', repository: 'octo-org/widgets' },
    { pullRequest: 7, action: 'opened' }
  ], 'the action handler, then the event handler')
})

t.test('examples/shopify.ts', async (t) => {
  const body = '{"id":820982911946154500,"total_price":"10.00"}'
  const event = await run(t, buildShopifyService, 'ex-shopify', async () => ({
    url: '/webhooks/shopify', payload: body,
    headers: {
      'content-type': 'application/json', 'x-shopify-hmac-sha256': createHmac('sha256', 'old-secret-0123456789').update(body).digest('base64'),
      'x-shopify-topic': 'orders/create', 'x-shopify-event-id': 'shev-1', 'x-shopify-shop-domain': 'anvil.myshopify.com'
    }
  }))
  t.match(event, { provider: 'shopify', eventType: 'orders/create', eventId: 'shev-1' })
})
