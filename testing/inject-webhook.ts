/**
 * `injectWebhook(app, …)`: a webhook signed as its provider signs it, sent through `app.inject`, so a test
 * goes through the real route: verification, dedupe, enqueue. Typed structurally (no Fastify import), so it
 * fits any app that registered the `anvil` plugin.
 */
import type { KeyObject } from 'node:crypto'
import { errors } from '../src/shared/errors.js'
import type { ProviderName } from '../src/providers/presets.js'
import { fixture as makeFixture, type FixtureName, type WebhookFixture } from '../src/testing/fixture.js'
import { signRequest } from '../src/testing/sign-request.js'

interface InjectedSource { name: string, provider: string, path: string, publicUrl?: string }

/** What injectWebhook needs of a Fastify app: `inject`, and the sources the `anvil` plugin registered. */
export interface InjectableApp {
  inject: (options: { method: 'POST', url: string, headers: Record<string, string>, payload: string }) => PromiseLike<InjectedResponse>
  anvil?: { ingress: { options: { sources: readonly InjectedSource[] } } }
}

export interface InjectedResponse {
  statusCode: number
  headers: Record<string, unknown>
  body: string
  json: () => any
}

export interface InjectWebhookOptions<P extends ProviderName = ProviderName> {
  provider: P
  /** The source to post to, when several use the provider; default the first that does. */
  source?: string
  /** A fixture (`fixture('stripe', 'invoice.paid')`) or a fixture's name. Give this or `body`. */
  fixture?: WebhookFixture | FixtureName<P>
  body?: string | Buffer | object
  /** The source's secret (Discord, SendGrid: the private key of the listed public key). */
  secret: string | KeyObject
  /** For header-typed providers (GitHub, Shopify, Linear, GitLab) when sending a `body`; a fixture brings its own. */
  eventType?: string
  /** The delivery id header (GitHub, Shopify, …): the same id again is a redelivery. */
  eventId?: string
  /** Seconds since the epoch; default now. */
  timestamp?: number
}

/** The host the request is sent to, and the URL URL-signing providers sign when the source has no publicUrl. */
const HOST = 'anvil.test'

function findSource (app: InjectableApp, provider: string, name: string | undefined): InjectedSource {
  const sources = app.anvil?.ingress.options.sources
  if (sources === undefined) throw new errors.INVALID_OPTIONS('injectWebhook: the app has no anvil plugin registered (or is not ready: await app.ready() first)')
  const found = sources.find((s) => name === undefined ? s.provider === provider : s.name === name)
  if (found === undefined) {
    throw new errors.INVALID_OPTIONS(`injectWebhook: no ${name === undefined ? `${provider} source` : `source named ${name}`}; the app has ${sources.map((s) => `${s.name} (${s.provider})`).join(', ')}`)
  }
  if (found.provider !== provider) throw new errors.INVALID_OPTIONS(`injectWebhook: source ${found.name} is a ${found.provider} source, not ${provider}`)
  return found
}

export async function injectWebhook<P extends ProviderName> (app: InjectableApp, options: InjectWebhookOptions<P>): Promise<InjectedResponse> {
  const { provider } = options
  if ((options.fixture === undefined) === (options.body === undefined)) throw new errors.INVALID_OPTIONS('injectWebhook: give either fixture or body')
  const sample = typeof options.fixture === 'string' ? makeFixture(provider, options.fixture) : options.fixture
  if (sample !== undefined && sample.provider !== provider) throw new errors.INVALID_OPTIONS(`injectWebhook: a ${sample.provider} fixture sent as ${provider}`)
  const source = findSource(app, provider, options.source)
  const publicUrl = source.publicUrl ?? `http://${HOST}${source.path}`
  const signed = signRequest(provider, {
    body: (sample?.body ?? options.body) as string | Buffer | object,
    secret: options.secret,
    timestamp: options.timestamp,
    url: publicUrl,
    eventId: options.eventId,
    eventType: options.eventType ?? sample?.eventType
  })
  // A signed URL with a query (Twilio's bodySHA256) sends that query too: the ingress appends it to publicUrl.
  const query = signed.url === undefined ? '' : new URL(signed.url).search
  return await app.inject({ method: 'POST', url: source.path + query, headers: { host: HOST, ...signed.headers }, payload: signed.body })
}
