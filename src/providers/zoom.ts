/**
 * Zoom: `x-zm-signature: v0=<hex>`, HMAC-SHA256 over `v0:<x-zm-request-timestamp>:<body>` with the secret
 * token. `endpoint.url_validation` is answered with `{ plainToken, encryptedToken }` (HMAC-SHA256 hex of
 * the plain token with the secret that verified the request) and never enqueued. Zoom sends no event id.
 */
import type { KeyObject } from 'node:crypto'
import type { SignatureScheme } from '../signature.js'
import { checkV0, definePreset, field, hmac, parseJson, presetKeys, type PresetConfig } from './common.js'

const SIGNATURE = 'x-zm-signature'
const TIMESTAMP = 'x-zm-request-timestamp'
const URL_VALIDATION = 'endpoint.url_validation'

export function zoomScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('zoom', config.secrets)
  return definePreset(config, {
    name: 'zoom',
    headers: [SIGNATURE],
    check (payload, headers) {
      return checkV0(keys, payload, headers, { signature: SIGNATURE, timestamp: TIMESTAMP })
    },
    describe (payload, _headers, checked) {
      const body = parseJson(payload)
      const eventType = field(body, 'event')
      if (eventType !== URL_VALIDATION) return { eventType }
      const plainToken = field(body, 'payload.plainToken') ?? ''
      /* c8 ignore next -- check() always sets secretIndex */
      const key = keys[checked.secretIndex ?? 0] as KeyObject
      const encryptedToken = hmac('sha256', key, plainToken).toString('hex')
      return { eventType, handshake: { statusCode: 200, body: { plainToken, encryptedToken } } }
    }
  })
}
