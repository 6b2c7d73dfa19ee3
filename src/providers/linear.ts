/**
 * Linear: `Linear-Signature: <hex>`, HMAC-SHA256 over the raw body. The timestamp (`webhookTimestamp`, ms)
 * sits inside the signed body, so it is read, and held against the tolerance, after the signature matched.
 */
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { parseJson } from '../shared/json.js'
import { decodeHex, hmac, requireMatch } from '../signing/crypto.js'
import { optionalHeader, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { presetKeys } from '../signing/preset-keys.js'

const HEADER = 'linear-signature'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const linearHeaders: readonly string[] = [HEADER]

export function linearScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('linear', config.secrets)
  return definePreset(config, {
    name: 'linear',
    headers: linearHeaders,
    check (payload, headers) {
      const value = requireHeader(headers, HEADER)
      const given = decodeHex(value, 32, HEADER)
      requireMatch(keys.map((key) => hmac('sha256', key, payload)), [given])
      return { signature: value }
    },
    describe (payload, headers) {
      const body = parseJson(payload) as { webhookTimestamp?: unknown } | undefined
      const ms = body?.webhookTimestamp
      return {
        eventId: optionalHeader(headers, 'linear-delivery'),
        eventType: optionalHeader(headers, 'linear-event'),
        // Linear always signs one; a body without a numeric one is held to be as old as can be (so, stale), as Linear's SDK does.
        timestamp: typeof ms === 'number' && Number.isFinite(ms) ? ms / 1000 : 0
      }
    }
  })
}
