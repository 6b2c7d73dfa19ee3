/**
 * Paddle Billing: `Paddle-Signature: ts=<seconds>;h1=<hex>[;h1=<hex>…]`, HMAC-SHA256 over `ts:body`.
 * Any h1 may match (Paddle sends one per active secret while rotating).
 */
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { parseJson } from '../shared/json.js'
import { readPath } from '../shared/read-path.js'
import { hmac, requireMatch } from '../signing/crypto.js'
import { parseSeconds, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { parseTimestampedHeader } from '../signing/parse-timestamped-header.js'
import { presetKeys } from '../signing/preset-keys.js'

const HEADER = 'paddle-signature'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const paddleHeaders: readonly string[] = [HEADER]

export function paddleScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('paddle', config.secrets)
  return definePreset(config, {
    name: 'paddle',
    headers: paddleHeaders,
    check (payload, headers) {
      const value = requireHeader(headers, HEADER)
      const { timestamp, given } = parseTimestampedHeader(value, HEADER, { separator: ';', timestampKey: 'ts', signatureKey: 'h1' })
      requireMatch(keys.map((key) => hmac('sha256', key, `${timestamp}:`, payload)), given)
      return { signature: value, timestamp: parseSeconds(timestamp, HEADER) }
    },
    describe (payload) {
      const body = parseJson(payload)
      return { eventId: readPath(body, 'event_id'), eventType: readPath(body, 'event_type') }
    }
  })
}
