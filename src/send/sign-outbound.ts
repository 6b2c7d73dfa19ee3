/**
 * The signature headers of an outgoing webhook, one signature per live secret so a receiver holding either
 * the old or the new secret verifies during a rotation. Standard Webhooks by default (`v1` HMAC, or `v1a`
 * Ed25519 for a `whsk_` signing key); the Stripe-shaped scheme (`X-Webhook-Signature: t=…,v1=…`) per endpoint.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto'
import { standardKey } from '../providers/standard-webhooks.js'
import { ed25519Sign, SIGNING_KEY_PREFIX, signingKeyObject } from '../signing/ed25519.js'

export type OutboundScheme = 'standard-webhooks' | 'stripe'
export const OUTBOUND_SCHEMES: readonly OutboundScheme[] = ['standard-webhooks', 'stripe']

export interface SignInput {
  scheme: OutboundScheme
  /** The message id (`webhook-id`), the same on every attempt so receivers can dedupe. */
  id: string
  type: string
  /** Unix seconds of this attempt. */
  timestamp: number
  /** The bytes sent: the envelope JSON, or a forwarded event's raw payload. */
  body: string | Buffer
  secrets: readonly string[]
}

/** Keys made once per secret (decoding and importing a key on every delivery showed in profiles); bounded. */
const keys = new Map<string, KeyObject>()
const MAX_CACHED_KEYS = 10_000

function keyOf (scheme: OutboundScheme, secret: string): KeyObject {
  const id = scheme + ':' + secret
  let key = keys.get(id)
  if (key === undefined) {
    if (keys.size >= MAX_CACHED_KEYS) keys.clear()
    key = scheme === 'stripe' ? createSecretKey(Buffer.from(secret, 'utf8'))
      : secret.startsWith(SIGNING_KEY_PREFIX) ? signingKeyObject(secret) : createSecretKey(standardKey(secret))
    keys.set(id, key)
  }
  return key
}

/** Standard Webhooks over `id.timestamp.body`, base64: HMAC-SHA256 with the key after `whsec_` (`v1`), or Ed25519 with a `whsk_` key (`v1a`). */
function standardHeaders (input: SignInput): Record<string, string> {
  const prefix = `${input.id}.${input.timestamp}.`
  const signatures = input.secrets.map((secret) => secret.startsWith(SIGNING_KEY_PREFIX)
    ? 'v1a,' + ed25519Sign(keyOf('standard-webhooks', secret), prefix, input.body)
    : 'v1,' + createHmac('sha256', keyOf('standard-webhooks', secret)).update(prefix).update(input.body).digest('base64'))
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': signatures.join(' ')
  }
}

/** Stripe's shape: HMAC-SHA256 over `t.body` with the whole secret string as the key, hex. */
function stripeHeaders (input: SignInput): Record<string, string> {
  const prefix = `${input.timestamp}.`
  const signatures = input.secrets.map((secret) => 'v1=' + createHmac('sha256', keyOf('stripe', secret)).update(prefix).update(input.body).digest('hex'))
  return {
    'x-webhook-signature': [`t=${input.timestamp}`, ...signatures].join(','),
    'x-webhook-event': input.type,
    'x-webhook-timestamp': String(input.timestamp),
    'x-webhook-id': input.id
  }
}

export function signatureHeaders (input: SignInput): Record<string, string> {
  if (input.secrets.length === 0) throw new TypeError('an outgoing webhook needs at least one secret')
  return input.scheme === 'stripe' ? stripeHeaders(input) : standardHeaders(input)
}
