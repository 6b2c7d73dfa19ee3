/** The provider presets by name: `provider: '<name>'` on a source picks one. */
import { type SignatureScheme } from '../signing/signature-scheme.js'
import { anvilHeaders, anvilHmacScheme } from './anvil.js'
import { DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS, type PresetConfig } from './define-preset.js'
import { discordHeaders, discordScheme } from './discord.js'
import { githubHeaders, githubScheme } from './github.js'
import { gitlabHeaders, gitlabScheme } from './gitlab.js'
import { linearHeaders, linearScheme } from './linear.js'
import { paddleHeaders, paddleScheme } from './paddle.js'
import { sendgridHeaders, sendgridScheme } from './sendgrid.js'
import { shopifyHeaders, shopifyScheme } from './shopify.js'
import { slackHeaders, slackScheme } from './slack.js'
import { squareHeaders, squareScheme } from './square.js'
import { standardWebhooksHeaders, standardWebhooksScheme } from './standard-webhooks.js'
import { stripeHeaders, stripeScheme } from './stripe.js'
import { twilioHeaders, twilioScheme } from './twilio.js'
import { zoomHeaders, zoomScheme } from './zoom.js'

export { DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS, type PresetConfig }

/** Each preset: how its scheme is made, and the headers its signature (or token) comes in. */
const PRESETS = {
  anvil: { scheme: (config: PresetConfig) => anvilHmacScheme(config.secrets), headers: anvilHeaders },
  stripe: { scheme: stripeScheme, headers: stripeHeaders },
  github: { scheme: githubScheme, headers: githubHeaders },
  shopify: { scheme: shopifyScheme, headers: shopifyHeaders },
  slack: { scheme: slackScheme, headers: slackHeaders },
  twilio: { scheme: twilioScheme, headers: twilioHeaders },
  'standard-webhooks': { scheme: standardWebhooksScheme, headers: standardWebhooksHeaders },
  paddle: { scheme: paddleScheme, headers: paddleHeaders },
  linear: { scheme: linearScheme, headers: linearHeaders },
  square: { scheme: squareScheme, headers: squareHeaders },
  zoom: { scheme: zoomScheme, headers: zoomHeaders },
  gitlab: { scheme: gitlabScheme, headers: gitlabHeaders },
  discord: { scheme: discordScheme, headers: discordHeaders },
  sendgrid: { scheme: sendgridScheme, headers: sendgridHeaders }
} satisfies Record<string, { scheme: (config: PresetConfig) => SignatureScheme, headers: readonly string[] }>

export type ProviderName = keyof typeof PRESETS
export const PROVIDER_NAMES = Object.keys(PRESETS) as ProviderName[]
export const DEFAULT_PROVIDER: ProviderName = 'anvil'

/** Presets whose `secrets` are public keys (checked as keys), not shared secrets. */
export const PUBLIC_KEY_PROVIDERS: readonly ProviderName[] = ['discord', 'sendgrid']

/** Presets that sign the request URL, and so need `publicUrl` behind a proxy. */
export const URL_SIGNING_PROVIDERS: readonly ProviderName[] = ['twilio', 'square']

/** Every header any preset reads a signature or a secret from, for log redaction: a new preset's are in it. */
export const SIGNATURE_HEADERS: readonly string[] = [...new Set(Object.values(PRESETS).flatMap((preset) => preset.headers))]

export function isProviderName (name: string): name is ProviderName {
  return Object.hasOwn(PRESETS, name)
}

export function createPresetScheme (provider: ProviderName, config: PresetConfig): SignatureScheme {
  return PRESETS[provider].scheme(config)
}
