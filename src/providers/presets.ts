/** The provider presets by name: `provider: '<name>'` on a source picks one. */
import { type SignatureScheme } from '../signing/signature-scheme.js'
import { anvilHmacScheme } from './anvil.js'
import { DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS, type PresetConfig } from './define-preset.js'
import { discordScheme } from './discord.js'
import { githubScheme } from './github.js'
import { gitlabScheme } from './gitlab.js'
import { linearScheme } from './linear.js'
import { paddleScheme } from './paddle.js'
import { sendgridScheme } from './sendgrid.js'
import { shopifyScheme } from './shopify.js'
import { slackScheme } from './slack.js'
import { squareScheme } from './square.js'
import { standardWebhooksScheme } from './standard-webhooks.js'
import { stripeScheme } from './stripe.js'
import { twilioScheme } from './twilio.js'
import { zoomScheme } from './zoom.js'

export { DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS, type PresetConfig }

const PRESETS = {
  anvil: (config: PresetConfig) => anvilHmacScheme(config.secrets),
  stripe: stripeScheme,
  github: githubScheme,
  shopify: shopifyScheme,
  slack: slackScheme,
  twilio: twilioScheme,
  'standard-webhooks': standardWebhooksScheme,
  paddle: paddleScheme,
  linear: linearScheme,
  square: squareScheme,
  zoom: zoomScheme,
  gitlab: gitlabScheme,
  discord: discordScheme,
  sendgrid: sendgridScheme
} satisfies Record<string, (config: PresetConfig) => SignatureScheme>

export type ProviderName = keyof typeof PRESETS
export const PROVIDER_NAMES = Object.keys(PRESETS) as ProviderName[]
export const DEFAULT_PROVIDER: ProviderName = 'anvil'

/** Presets whose `secrets` are public keys (checked as keys), not shared secrets. */
export const PUBLIC_KEY_PROVIDERS: readonly ProviderName[] = ['discord', 'sendgrid']

/** Presets that sign the request URL, and so need `publicUrl` behind a proxy. */
export const URL_SIGNING_PROVIDERS: readonly ProviderName[] = ['twilio', 'square']

/**
 * Every header any preset reads a signature or a secret from, for log redaction. (`webhook-signature` and
 * `svix-signature` are Standard Webhooks'; `x-square-signature` and `x-hub-signature` are legacy names.)
 */
export const SIGNATURE_HEADERS: readonly string[] = [
  'x-signature', 'stripe-signature', 'x-hub-signature-256', 'x-hub-signature', 'x-shopify-hmac-sha256',
  'x-slack-signature', 'x-twilio-signature', 'webhook-signature', 'svix-signature', 'paddle-signature',
  'linear-signature', 'x-square-hmacsha256-signature', 'x-square-signature', 'x-zm-signature', 'x-gitlab-token',
  'x-signature-ed25519', 'x-twilio-email-event-webhook-signature'
]

export function isProviderName (name: string): name is ProviderName {
  return Object.hasOwn(PRESETS, name)
}

export function createPresetScheme (provider: ProviderName, config: PresetConfig): SignatureScheme {
  return PRESETS[provider](config)
}
