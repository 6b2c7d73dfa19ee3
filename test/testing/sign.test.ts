/**
 * The testing kit's signers against each provider's own SDK (where one is a devDependency): what
 * `signRequest` makes is what the provider's verifier accepts, and a wrong secret is refused by it.
 * Zoom publishes no verifier for Node, and GitLab's is a token compare; test/testing/kit.test.ts sends every
 * preset, these two included, through the real ingress.
 */
import t from 'tap'
import Stripe from 'stripe'
import { verify as verifyGithub } from '@octokit/webhooks-methods'
import '@shopify/shopify-api/adapters/node'
import { ApiVersion, shopifyApi } from '@shopify/shopify-api'
import twilio from 'twilio'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { Paddle } from '@paddle/paddle-node-sdk'
import { LinearWebhookClient } from '@linear/sdk/webhooks'
import { WebhooksHelper } from 'square'
import { verifyKey } from 'discord-interactions'
import { EventWebhook } from '@sendgrid/eventwebhook'
import { isValidSlackRequest } from '@slack/bolt'
import { fixture, fixtureNames, generateKeyPair, signRequest } from '../../testing/index.js'
import { PROVIDER_NAMES } from '../../src/providers/presets.js'

const SECRET = 'whsec_kit_current_0123456789'
const body = (provider: Parameters<typeof fixture>[0], name: string): object => fixture(provider, name as never).body as object

t.test('stripe: Stripe.webhooks.constructEvent accepts the signature', async (t) => {
  const stripe = new Stripe('sk_test_anvil')
  const signed = signRequest('stripe', { body: body('stripe', 'invoice.paid'), secret: SECRET })
  const event = stripe.webhooks.constructEvent(signed.body, signed.headers['stripe-signature'] as string, SECRET)
  t.equal(event.type, 'invoice.paid')
  t.equal(signed.headers['content-type'], 'application/json')
  t.throws(() => stripe.webhooks.constructEvent(signed.body, signed.headers['stripe-signature'] as string, 'whsec_other'))
})

t.test('github: @octokit/webhooks-methods verify accepts the signature; the event and delivery headers are set', async (t) => {
  const signed = signRequest('github', { body: body('github', 'push'), secret: SECRET, eventType: 'push', eventId: 'dlv-1' })
  t.equal(await verifyGithub(SECRET, signed.body, signed.headers['x-hub-signature-256'] as string), true)
  t.equal(await verifyGithub('other', signed.body, signed.headers['x-hub-signature-256'] as string), false)
  t.match(signed.headers, { 'x-github-event': 'push', 'x-github-delivery': 'dlv-1' })
})

t.test("shopify: @shopify/shopify-api's webhooks.validate accepts the request", async (t) => {
  const validate = async (secret: string): Promise<boolean> => {
    const shopify = shopifyApi({
      apiKey: 'key', apiSecretKey: secret, apiVersion: ApiVersion.January25, hostName: 'anvil.example',
      isEmbeddedApp: false, logger: { level: 0, log: async () => {} }
    })
    const signed = signRequest('shopify', { body: body('shopify', 'orders/create'), secret: SECRET, eventType: 'orders/create' })
    const result = await shopify.webhooks.validate({ rawBody: signed.body, rawRequest: { headers: signed.headers, method: 'POST', url: '/' } as never, rawResponse: {} as never })
    return result.valid
  }
  t.equal(await validate(SECRET), true)
  t.equal(await validate('shpss_other'), false)
})

t.test('twilio: validateRequest accepts form bodies, validateRequestWithBody JSON ones (bodySHA256 in the signed URL)', async (t) => {
  const url = 'https://hooks.example.com/twilio'
  const form = body('twilio', 'incoming_message') as Record<string, string>
  const signed = signRequest('twilio', { body: form, secret: SECRET, url })
  t.equal(signed.headers['content-type'], 'application/x-www-form-urlencoded')
  t.equal(twilio.validateRequest(SECRET, signed.headers['x-twilio-signature'] as string, url, Object.fromEntries(new URLSearchParams(signed.body))), true)
  t.equal(twilio.validateRequest('other', signed.headers['x-twilio-signature'] as string, url, form), false)
  const json = signRequest('twilio', { body: '{"event":"call.completed"}', secret: SECRET, url })
  t.match(json.url, /\?bodySHA256=[0-9a-f]{64}$/)
  t.equal(twilio.validateRequestWithBody(SECRET, json.headers['x-twilio-signature'] as string, json.url as string, json.body), true)
  t.throws(() => signRequest('twilio', { body: form, secret: SECRET }), { code: 'ANVIL_ERR_INVALID_OPTIONS' }, 'Twilio signs the URL')
})

t.test('standard-webhooks: the standardwebhooks SDK verifies the headers', async (t) => {
  const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64')
  const signed = signRequest('standard-webhooks', { body: body('standard-webhooks', 'user.created'), secret, eventId: 'msg_1' })
  t.same(new StandardWebhook(secret).verify(signed.body, signed.headers), JSON.parse(signed.body))
  t.throws(() => new StandardWebhook('whsec_' + Buffer.alloc(32, 8).toString('base64')).verify(signed.body, signed.headers))
})

t.test("paddle: the Paddle SDK's isSignatureValid accepts the signature", async (t) => {
  const paddle = new Paddle('pdl_sdbx_apikey_anvil')
  const signed = signRequest('paddle', { body: body('paddle', 'transaction.completed'), secret: SECRET })
  t.equal(await paddle.webhooks.isSignatureValid(signed.body, SECRET, signed.headers['paddle-signature'] as string), true)
  t.equal(await paddle.webhooks.isSignatureValid(signed.body, 'other', signed.headers['paddle-signature'] as string), false)
})

t.test("linear: LinearWebhookClient verifies the signature and the body's webhookTimestamp", async (t) => {
  const timestamp = Math.floor(Date.now() / 1000)
  const signed = signRequest('linear', { body: body('linear', 'Issue.create'), secret: SECRET, eventType: 'Issue', timestamp })
  t.equal(JSON.parse(signed.body).webhookTimestamp, timestamp * 1000, 'the signed timestamp is in the body')
  t.equal(new LinearWebhookClient(SECRET).verify(Buffer.from(signed.body), signed.headers['linear-signature'] as string), true)
  t.throws(() => new LinearWebhookClient('other').verify(Buffer.from(signed.body), signed.headers['linear-signature'] as string))
  t.match(signed.headers, { 'linear-event': 'Issue' })
})

t.test('square: WebhooksHelper.verifySignature accepts the signature over the URL and body', async (t) => {
  const url = 'https://hooks.example.com/square'
  const signed = signRequest('square', { body: body('square', 'payment.updated'), secret: SECRET, url })
  const check = async (key: string): Promise<boolean> => await WebhooksHelper.verifySignature({
    requestBody: signed.body, signatureHeader: signed.headers['x-square-hmacsha256-signature'] as string, signatureKey: key, notificationUrl: url
  })
  t.equal(await check(SECRET), true)
  t.equal(await check('other'), false)
})

t.test("discord: discord-interactions' verifyKey accepts the Ed25519 signature with the generated public key", async (t) => {
  const pair = generateKeyPair('discord')
  t.match(pair.publicKey, /^[0-9a-f]{64}$/)
  for (const secret of [pair.privateKey, pair.privateKeyPem]) {
    const signed = signRequest('discord', { body: body('discord', 'APPLICATION_COMMAND'), secret })
    t.equal(await verifyKey(signed.body, signed.headers['x-signature-ed25519'] as string, signed.headers['x-signature-timestamp'] as string, pair.publicKey), true)
    t.equal(await verifyKey(signed.body, signed.headers['x-signature-ed25519'] as string, signed.headers['x-signature-timestamp'] as string, generateKeyPair('discord').publicKey), false)
  }
  t.throws(() => signRequest('discord', { body: '{}', secret: 'not a key' }), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
  t.throws(() => signRequest('discord', { body: '{}', secret: generateKeyPair('sendgrid').privateKey }), /ed25519 private key/)
})

t.test("sendgrid: @sendgrid/eventwebhook's verifySignature accepts the ECDSA signature with the generated key", async (t) => {
  const pair = generateKeyPair('sendgrid')
  const signed = signRequest('sendgrid', { body: body('sendgrid', 'delivered'), secret: pair.privateKey })
  const webhook = new EventWebhook()
  const pem = (base64: string): string => `-----BEGIN PUBLIC KEY-----\n${base64}\n-----END PUBLIC KEY-----`
  const verify = (publicKey: string): boolean => webhook.verifySignature(webhook.convertPublicKeyToECDSA(pem(publicKey)), signed.body,
    signed.headers['x-twilio-email-event-webhook-signature'] as string, signed.headers['x-twilio-email-event-webhook-timestamp'] as string)
  t.equal(verify(pair.publicKey), true)
  t.equal(verify(generateKeyPair('sendgrid').publicKey), false)
})

t.test("slack: @slack/bolt's isValidSlackRequest accepts the v0 signature", async (t) => {
  const signed = signRequest('slack', { body: body('slack', 'app_mention'), secret: SECRET })
  const headers = {
    'x-slack-signature': signed.headers['x-slack-signature'] as string,
    'x-slack-request-timestamp': Number(signed.headers['x-slack-request-timestamp'])
  }
  t.equal(isValidSlackRequest({ signingSecret: SECRET, body: signed.body, headers }), true)
  t.equal(isValidSlackRequest({ signingSecret: 'other_secret_0123456789', body: signed.body, headers }), false)
})

t.test('fixtures: every preset has at least one; each call has fresh ids; overrides merge deeply; wrong names are one clear error', async (t) => {
  for (const provider of PROVIDER_NAMES) t.ok(fixtureNames(provider).length > 0, provider)
  const [a, b] = [fixture('stripe', 'invoice.paid'), fixture('stripe', 'invoice.paid')] as Array<{ body: any }>
  t.not(a?.body.id, b?.body.id, 'fresh event ids')
  t.not(a?.body.data.object.id, b?.body.data.object.id, 'fresh object ids')
  t.match(a?.body.id, /^evt_[A-Za-z0-9]{24}$/)
  const paid = fixture('stripe', 'invoice.paid', { overrides: { data: { object: { amount_paid: 999 } } } }).body as any
  t.equal(paid.data.object.amount_paid, 999)
  t.equal(paid.data.object.currency, 'usd', 'the rest of the object stays')
  const batch = fixture('sendgrid', 'bounce', { overrides: { email: 'other@example.com' } }).body as any[]
  t.same(batch.map((event) => event.email), ['other@example.com'], 'into each event of a batch')
  t.match(fixture('github', 'pull_request.opened'), { eventType: 'pull_request', body: { action: 'opened' } })
  t.throws(() => fixture('stripe', 'invoice.payed' as never), /no stripe fixture "invoice.payed"; there are checkout.session.completed, /)
  t.throws(() => fixture('nope' as never, 'x' as never), /unknown provider "nope"/)
  t.throws(() => signRequest('nope' as never, { body: '{}', secret: 'x' }), /unknown provider "nope"/)
})
