/**
 * The testing kit end to end, through a real Redis and a real worker: for every preset, each fixture signed
 * by `signRequest` (through `injectWebhook`) is verified by the ingress and reaches the router's handler for
 * its name, with its body as `event.data`. The worker is the plugin (`anvilWorker({ handler: router })`).
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { PROVIDER_NAMES } from '../../src/providers/presets.js'
import anvil, { anvilWorker, createRouter, type AnyRoutedEvent, type ProviderName, type SourceOptions } from '../../index.js'
import { fixture, fixtureNames, generateKeyPair, injectWebhook } from '../../testing/index.js'
import { TestRedis } from '../helpers/redis.js'

import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const discord = generateKeyPair('discord')
const sendgrid = generateKeyPair('sendgrid')
const STANDARD = 'whsec_' + Buffer.alloc(32, 3).toString('base64')
/** What signs (`secret` of injectWebhook) and what verifies (`secrets` of the source), per provider. */
const keys = (provider: ProviderName): { sign: Parameters<typeof injectWebhook>[1]['secret'], verify: string } =>
  provider === 'discord' ? { sign: discord.privateKey, verify: discord.publicKey }
    : provider === 'sendgrid' ? { sign: sendgrid.privateKey, verify: sendgrid.publicKey }
      : provider === 'standard-webhooks' ? { sign: STANDARD, verify: STANDARD }
        : { sign: `secret-${provider}-0123456789`, verify: `secret-${provider}-0123456789` }

const sources: SourceOptions[] = PROVIDER_NAMES.map((provider) => ({
  provider,
  path: `/hooks/${provider}`,
  secrets: [keys(provider).verify],
  // Twilio is given its public URL; Square is not, so the URL it signs is rebuilt from the Host header.
  ...(provider === 'twilio' ? { publicUrl: 'https://hooks.example.com/hooks/twilio' } : {})
}))

const seen = new Map<string, AnyRoutedEvent[]>()
const note = (key: string, event: AnyRoutedEvent): void => { seen.set(key, [...seen.get(key) ?? [], event]) }
const router = createRouter()
/** The handler key of a fixture: its route name; Twilio's have no event type and go to `twilio:*`. */
const routeOf = (provider: ProviderName, name: string): string => provider === 'twilio' ? 'twilio:*' : `${provider}:${name}`
for (const provider of PROVIDER_NAMES) {
  for (const name of fixtureNames(provider)) {
    if (provider === 'twilio') continue
    router.on(routeOf(provider, name) as 'anvil:*', (event) => note(routeOf(provider, name), event))
  }
}
router.on('twilio:*', (event) => note('twilio:*', event))
// Typed access, as a user writes it: these compile only because data is narrowed by the name.
const amounts: number[] = []
router.on('stripe:invoice.paid', (event) => { amounts.push(event.data.data.object.amount_paid) })
const titles: string[] = []
router.on('github:pull_request', (event) => { if (event.data.action === 'opened') titles.push(event.data.pull_request.title) })
// The providers typed by their own packages (@slack/types, discord-api-types, @paddle/paddle-node-sdk,
// @linear/sdk, square, @gitbeaker/core, @zoom/rivet): each reads a field its package types, from the fixture as sent.
const typedReads = new Map<string, unknown>()
router.on('slack:app_mention', (event) => { typedReads.set('slack', event.data.event.text) })
router.on('discord:APPLICATION_COMMAND', (event) => { typedReads.set('discord', event.data.data.name) })
router.on('paddle:transaction.completed', (event) => { typedReads.set('paddle', event.data.data.id) })
router.on('linear:Issue.create', (event) => { typedReads.set('linear', event.data.data.title) })
router.on('square:payment.updated', (event) => { typedReads.set('square', event.data.data?.object?.payment?.status) })
router.on('gitlab:Push Hook', (event) => { typedReads.set('gitlab', event.data.ref) })
router.on('zoom:meeting.started', (event) => { typedReads.set('zoom', event.data.payload.object.topic) })

const app: FastifyInstance = Fastify({ logger: false })
beforeStep(t, async () => {
  await app.register(anvil, { redis: redis.url, queueName: 'kit', sources, retrySchedule: [] })
  await app.register(anvilWorker, { handler: router, redis: redis.url, queueName: 'kit', sweepIntervalMs: 0 })
  await app.ready()
})
t.teardown(() => app.close())

/** What each provider answers for an accepted event (Discord: a deferred interaction response, or 204 for an event). */
function expectedStatus (provider: ProviderName, name: string): number {
  if (provider === 'discord') return name === 'APPLICATION_COMMAND' ? 200 : 204
  return 202
}

for (const provider of PROVIDER_NAMES) {
  t.test(`${provider}: every fixture, signed by the kit, is verified and reaches its typed handler`, async (t) => {
    for (const name of fixtureNames(provider)) {
      const sample = fixture(provider, name as never)
      const res = await injectWebhook(app, { provider, fixture: sample, secret: keys(provider).sign })
      if (provider === 'slack' && name === 'url_verification') {
        t.same([res.statusCode, res.json()], [200, { challenge: (sample.body as { challenge: string }).challenge }], 'the handshake is answered')
        continue
      }
      t.equal(res.statusCode, expectedStatus(provider, name), `${name}: ${res.body}`)
      const key = routeOf(provider, name)
      const sent = provider === 'sendgrid' ? (sample.body as unknown[])[0] : sample.body
      await eventually(`${key} handled`, () => (seen.get(key) ?? []).some((event) => JSON.stringify(event.data) === JSON.stringify(sent)))
      const event = seen.get(key)?.find((e) => JSON.stringify(e.data) === JSON.stringify(sent))
      t.match(event, { provider, source: provider, name: provider === 'twilio' ? undefined : key }, `${name}: routed as ${key}`)
    }
  })
}

t.test('typed handlers read the narrowed payloads', async (t) => {
  const invoice = fixture('stripe', 'invoice.paid', { overrides: { data: { object: { amount_paid: 4242 } } } })
  t.equal((await injectWebhook(app, { provider: 'stripe', fixture: invoice, secret: keys('stripe').sign })).statusCode, 202)
  await eventually('the invoice amount', () => amounts.includes(4242))
  const pr = fixture('github', 'pull_request.opened', { overrides: { pull_request: { title: 'Typed all the way' } } })
  t.equal((await injectWebhook(app, { provider: 'github', fixture: pr, secret: keys('github').sign })).statusCode, 202)
  await eventually('the pull request title', () => titles.includes('Typed all the way'))
  // Every preset's fixtures were handled by the tests above: the typed reads found the fields.
  t.match(Object.fromEntries(typedReads), {
    slack: '<@U0TESTBOT> is the deploy done?', discord: 'deploy', paddle: /^txn_01/, linear: 'Widgets overlap on small screens',
    square: 'COMPLETED', gitlab: 'refs/heads/main', zoom: 'Weekly planning'
  })
})

t.test('the samples cover what a Stripe or GitHub router handles most: at least 20 each, all router names', async (t) => {
  t.ok(fixtureNames('stripe').length >= 20, `stripe: ${fixtureNames('stripe').length}`)
  t.ok(fixtureNames('github').length >= 20, `github: ${fixtureNames('github').length}`)
  for (const name of ['payment_intent.payment_failed', 'customer.subscription.deleted', 'invoice.payment_failed', 'charge.dispute.created']) t.ok(fixtureNames('stripe').includes(name), name)
  for (const name of ['pull_request.closed', 'issue_comment.created', 'workflow_run.completed', 'release.published']) t.ok(fixtureNames('github').includes(name), name)
})

t.test('injectWebhook: a fixture by name; the same delivery id again is replayed; a wrong secret is a 401', async (t) => {
  const first = await injectWebhook(app, { provider: 'github', fixture: 'push', secret: keys('github').sign, eventId: 'dlv-kit-1' })
  const again = await injectWebhook(app, { provider: 'github', fixture: 'push', secret: keys('github').sign, eventId: 'dlv-kit-1' })
  t.same([first.statusCode, first.json().replayed, again.json().replayed, again.json().jobId], [202, false, true, first.json().jobId])
  const forged = await injectWebhook(app, { provider: 'stripe', fixture: 'charge.refunded', secret: 'whsec_wrong' })
  t.same([forged.statusCode, forged.json().code], [401, 'ANVIL_ERR_SIGNATURE_INVALID'])
  const raw = await injectWebhook(app, { provider: 'paddle', body: { event_id: 'evt_raw_1', event_type: 'transaction.paid', data: {} }, secret: keys('paddle').sign })
  t.equal(raw.statusCode, 202)
  await t.rejects(injectWebhook(app, { provider: 'stripe', secret: 'x' }), /give either fixture or body/)
  await t.rejects(injectWebhook(app, { provider: 'stripe', fixture: 'invoice.paid', secret: 'x', source: 'nope' }), /no source named nope; the app has anvil \(anvil\), stripe \(stripe\)/)
  await t.rejects(injectWebhook(Fastify(), { provider: 'stripe', fixture: 'invoice.paid', secret: 'x' }), /no anvil plugin registered/)
})
