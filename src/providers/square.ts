/**
 * Square: `X-Square-HmacSha256-Signature: <base64>`, HMAC-SHA256 over the notification URL followed by
 * the raw body. The URL is the one configured at Square (`publicUrl`), else the request's own.
 */
import { errors } from '../errors.js'
import type { SignatureScheme } from '../signature.js'
import { decodeBase64, definePreset, field, hmac, parseJson, requireHeader, requireMatch, presetKeys, type PresetConfig } from './common.js'

const HEADER = 'x-square-hmacsha256-signature'

export function squareScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('square', config.secrets)
  return definePreset(config, {
    name: 'square',
    headers: [HEADER, 'x-square-signature'],
    check (payload, headers, request) {
      const value = requireHeader(headers, HEADER)
      const given = decodeBase64(value, HEADER)
      const url = request.url
      /* c8 ignore next -- the plugin always passes the URL */
      if (url === undefined) throw new errors.SIGNATURE_INVALID()
      requireMatch(keys.map((key) => hmac('sha256', key, url, payload)), [given])
      return { signature: value }
    },
    describe (payload) {
      const body = parseJson(payload)
      return { eventId: field(body, 'event_id'), eventType: field(body, 'type') }
    }
  })
}
