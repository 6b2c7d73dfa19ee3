/**
 * Square: `X-Square-HmacSha256-Signature: <base64>`, HMAC-SHA256 over the notification URL followed by
 * the raw body. The URL is the one configured at Square (`publicUrl`), else the request's own.
 */
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { parseJson } from '../shared/json.js'
import { readPath } from '../shared/read-path.js'
import { decodeBase64, hmac, requireMatch } from '../signing/crypto.js'
import { requireHeader } from '../signing/headers.js'
import { signedUrl } from '../signing/signed-url.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { presetKeys } from '../signing/preset-keys.js'

const HEADER = 'x-square-hmacsha256-signature'
/** The headers that carry its signature (`x-square-signature` is Square's legacy one): read by the scheme, redacted from logs. */
export const squareHeaders: readonly string[] = [HEADER, 'x-square-signature']

export function squareScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('square', config.secrets)
  return definePreset(config, {
    name: 'square',
    headers: squareHeaders,
    check (payload, headers, request) {
      const value = requireHeader(headers, HEADER)
      const given = decodeBase64(value, HEADER)
      const url = signedUrl(request)
      requireMatch(keys.map((key) => hmac('sha256', key, url, payload)), [given])
      return { signature: value }
    },
    describe (payload) {
      const body = parseJson(payload)
      return { eventId: readPath(body, 'event_id'), eventType: readPath(body, 'type') }
    }
  })
}
