/**
 * Paddle Billing: `Paddle-Signature: ts=<seconds>;h1=<hex>[;h1=<hex>…]`, HMAC-SHA256 over `ts:body`.
 * Any h1 may match (Paddle sends one per active secret while rotating).
 */
import { errors } from '../errors.js'
import type { SignatureScheme } from '../signature.js'
import { decodeHex, definePreset, field, hmac, parseJson, parseSeconds, requireHeader, requireMatch, requireSecrets, type PresetConfig } from './common.js'

const HEADER = 'paddle-signature'

export function paddleScheme (config: PresetConfig): SignatureScheme {
  requireSecrets('paddle', config.secrets)
  return definePreset(config, {
    name: 'paddle',
    headers: [HEADER],
    check (payload, headers) {
      const value = requireHeader(headers, HEADER)
      let timestamp: string | undefined
      const given: Buffer[] = []
      for (const item of value.split(';')) {
        const at = item.indexOf('=')
        const key = item.slice(0, at).trim()
        const part = item.slice(at + 1).trim()
        if (key === 'ts') timestamp = part
        else if (key === 'h1') given.push(decodeHex(part, 32, HEADER))
      }
      if (timestamp === undefined || given.length === 0) throw new errors.SIGNATURE_MALFORMED(HEADER)
      requireMatch(config.secrets.map((secret) => hmac('sha256', secret, `${timestamp}:`, payload)), given)
      return { signature: value, timestamp: parseSeconds(timestamp, HEADER) }
    },
    describe (payload) {
      const body = parseJson(payload)
      return { eventId: field(body, 'event_id'), eventType: field(body, 'event_type') }
    }
  })
}
