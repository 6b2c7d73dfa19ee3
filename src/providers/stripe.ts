/**
 * Stripe: `Stripe-Signature: t=<seconds>,v1=<hex>[,v1=<hex>…]`, HMAC-SHA256 over `t.body` with the
 * `whsec_…` secret used as is. Any v1 may match (Stripe sends one per active secret while rolling).
 */
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { parseJson } from '../shared/json.js'
import { readPath } from '../shared/read-path.js'
import { hmac, requireMatch } from '../signing/crypto.js'
import { parseSeconds, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { parseTimestampedHeader } from '../signing/parse-timestamped-header.js'
import { presetKeys } from '../signing/preset-keys.js'

const HEADER = 'stripe-signature'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const stripeHeaders: readonly string[] = [HEADER]

export function stripeScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('stripe', config.secrets)
  return definePreset(config, {
    name: 'stripe',
    headers: stripeHeaders,
    check (payload, headers) {
      const value = requireHeader(headers, HEADER)
      const { timestamp, given } = parseTimestampedHeader(value, HEADER, { separator: ',', timestampKey: 't', signatureKey: 'v1' })
      const expected = keys.map((key) => hmac('sha256', key, `${timestamp}.`, payload))
      requireMatch(expected, given)
      return { signature: value, timestamp: parseSeconds(timestamp, HEADER) }
    },
    describe (payload) {
      const body = parseJson(payload)
      return { eventId: readPath(body, 'id'), eventType: readPath(body, 'type') }
    }
  })
}
