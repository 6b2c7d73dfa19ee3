/**
 * Stripe: `Stripe-Signature: t=<seconds>,v1=<hex>[,v1=<hex>…]`, HMAC-SHA256 over `t.body` with the
 * `whsec_…` secret used as is. Any v1 may match (Stripe sends one per active secret while rolling).
 */
import { errors } from '../errors.js'
import type { SignatureScheme } from '../signature.js'
import { decodeHex, definePreset, field, hmac, parseJson, parseSeconds, requireHeader, requireMatch, requireSecrets, type PresetConfig } from './common.js'

const HEADER = 'stripe-signature'

export function stripeScheme (config: PresetConfig): SignatureScheme {
  requireSecrets('stripe', config.secrets)
  return definePreset(config, {
    name: 'stripe',
    headers: [HEADER],
    check (payload, headers) {
      const value = requireHeader(headers, HEADER)
      let timestamp: string | undefined
      const given: Buffer[] = []
      for (const item of value.split(',')) {
        const at = item.indexOf('=')
        const key = item.slice(0, at).trim()
        const part = item.slice(at + 1).trim()
        if (key === 't') timestamp = part
        else if (key === 'v1') given.push(decodeHex(part, 32, HEADER))
      }
      if (timestamp === undefined || given.length === 0) throw new errors.SIGNATURE_MALFORMED(HEADER)
      const expected = config.secrets.map((secret) => hmac('sha256', secret, `${timestamp}.`, payload))
      requireMatch(expected, given)
      return { signature: value, timestamp: parseSeconds(timestamp, HEADER) }
    },
    describe (payload) {
      const body = parseJson(payload)
      return { eventId: field(body, 'id'), eventType: field(body, 'type') }
    }
  })
}
