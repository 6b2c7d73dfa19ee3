/**
 * `fixture(provider, name, { overrides })`: a realistic sample event, hand-written from the provider's public
 * docs (no real personal data), with fresh ids and times on every call.
 */
import { errors } from '../shared/errors.js'
import type { ProviderName } from '../providers/presets.js'
import { anvilFixtures } from './fixtures/anvil.js'
import { discordFixtures } from './fixtures/discord.js'
import { fresh, type FixtureSpec } from './fresh.js'
import { githubFixtures } from './fixtures/github.js'
import { gitlabFixtures } from './fixtures/gitlab.js'
import { linearFixtures } from './fixtures/linear.js'
import { paddleFixtures } from './fixtures/paddle.js'
import { sendgridFixtures } from './fixtures/sendgrid.js'
import { shopifyFixtures } from './fixtures/shopify.js'
import { slackFixtures } from './fixtures/slack.js'
import { squareFixtures } from './fixtures/square.js'
import { standardWebhooksFixtures } from './fixtures/standard-webhooks.js'
import { stripeFixtures } from './fixtures/stripe.js'
import { twilioFixtures } from './fixtures/twilio.js'
import { zoomFixtures } from './fixtures/zoom.js'

const FIXTURES = {
  anvil: anvilFixtures,
  stripe: stripeFixtures,
  github: githubFixtures,
  shopify: shopifyFixtures,
  slack: slackFixtures,
  twilio: twilioFixtures,
  'standard-webhooks': standardWebhooksFixtures,
  paddle: paddleFixtures,
  linear: linearFixtures,
  square: squareFixtures,
  zoom: zoomFixtures,
  gitlab: gitlabFixtures,
  discord: discordFixtures,
  sendgrid: sendgridFixtures
} satisfies Record<ProviderName, Record<string, FixtureSpec>>

export type FixtureName<P extends ProviderName> = keyof (typeof FIXTURES)[P] & string

export interface WebhookFixture {
  provider: ProviderName
  /** The fixture's name: the event as the router names it, after `<provider>:` (Twilio's are descriptive). */
  name: string
  /** The event type as the provider sends it in a header (GitHub, Shopify, Linear, GitLab), for `signRequest`. */
  eventType?: string
  /** The body (an array for SendGrid's batches, form fields for Twilio). */
  body: unknown
}

export interface FixtureOptions {
  /** Deep-merged into the body (into each event of a SendGrid batch): objects merge, anything else (arrays included) replaces. */
  overrides?: Record<string, unknown>
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** Into each event of a batch (SendGrid), else into the body. */
function merge (base: unknown, overrides: Record<string, unknown>): unknown {
  if (Array.isArray(base)) return base.map((item) => merge(item, overrides))
  if (!isPlainObject(base)) return overrides
  const merged: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(overrides)) {
    merged[key] = isPlainObject(value) && isPlainObject(merged[key]) ? merge(merged[key], value) : value
  }
  return merged
}

/** The fixture names of a provider (`anvil send --event` lists them on a wrong one). */
export function fixtureNames (provider: ProviderName): string[] {
  return Object.keys(FIXTURES[provider] ?? {})
}

export function fixture<P extends ProviderName> (provider: P, name: FixtureName<P>, options: FixtureOptions = {}): WebhookFixture {
  const specs = FIXTURES[provider] as Record<string, FixtureSpec> | undefined
  if (specs === undefined) throw new errors.INVALID_OPTIONS(`fixture: unknown provider ${JSON.stringify(provider)}`)
  const spec = Object.hasOwn(specs, name) ? specs[name] : undefined
  if (spec === undefined) {
    throw new errors.INVALID_OPTIONS(`fixture: no ${provider} fixture ${JSON.stringify(name)}; there are ${Object.keys(specs).join(', ')}`)
  }
  const body = spec.body(fresh())
  return {
    provider,
    name,
    ...(spec.eventType === undefined ? {} : { eventType: spec.eventType }),
    body: options.overrides === undefined ? body : merge(body, options.overrides)
  }
}
