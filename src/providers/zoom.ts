/**
 * Zoom: `x-zm-signature: v0=<hex>`, HMAC-SHA256 over `v0:<x-zm-request-timestamp>:<body>` with the secret
 * token. `endpoint.url_validation` is answered with `{ plainToken, encryptedToken }` (HMAC-SHA256 hex of
 * the plain token with the secret that verified the request) and never enqueued. Zoom sends no event id.
 */
import { errors } from '../errors.js'
import type { SignatureScheme } from '../signature.js'
import { decodeHex, definePreset, field, hmac, parseJson, parseSeconds, requireHeader, requireMatch, requireSecrets, type PresetConfig } from './common.js'

const SIGNATURE = 'x-zm-signature'
const TIMESTAMP = 'x-zm-request-timestamp'
const PREFIX = 'v0='
const URL_VALIDATION = 'endpoint.url_validation'

export function zoomScheme (config: PresetConfig): SignatureScheme {
  requireSecrets('zoom', config.secrets)
  return definePreset(config, {
    name: 'zoom',
    headers: [SIGNATURE],
    check (payload, headers) {
      const value = requireHeader(headers, SIGNATURE)
      const timestamp = requireHeader(headers, TIMESTAMP)
      if (!value.startsWith(PREFIX)) throw new errors.SIGNATURE_MALFORMED(SIGNATURE)
      const given = decodeHex(value.slice(PREFIX.length), 32, SIGNATURE)
      const seconds = parseSeconds(timestamp, TIMESTAMP)
      const secretIndex = requireMatch(config.secrets.map((secret) => hmac('sha256', secret, `v0:${timestamp}:`, payload)), [given])
      return { signature: value, timestamp: seconds, secretIndex }
    },
    describe (payload, _headers, checked) {
      const body = parseJson(payload)
      const eventType = field(body, 'event')
      if (eventType !== URL_VALIDATION) return { eventType }
      const plainToken = field(body, 'payload.plainToken') ?? ''
      /* c8 ignore next -- check() always sets secretIndex */
      const secret = config.secrets[checked.secretIndex ?? 0] ?? ''
      const encryptedToken = hmac('sha256', secret, plainToken).toString('hex')
      return { eventType, handshake: { statusCode: 200, body: { plainToken, encryptedToken } } }
    }
  })
}
