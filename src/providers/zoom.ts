/**
 * Zoom: `x-zm-signature: v0=<hex>`, HMAC-SHA256 over `v0:<x-zm-request-timestamp>:<body>` with the secret
 * token. `endpoint.url_validation` is answered with `{ plainToken, encryptedToken }` (HMAC-SHA256 hex of
 * the plain token with the secret that verified the request) and never enqueued. Zoom sends no event id.
 */
import type { KeyObject } from 'node:crypto'
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { parseJson } from '../shared/json.js'
import { readPath } from '../shared/read-path.js'
import { hmac } from '../signing/crypto.js'
import { checkV0 } from '../signing/check-v0.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { presetKeys } from '../signing/preset-keys.js'

const SIGNATURE = 'x-zm-signature'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const zoomHeaders: readonly string[] = [SIGNATURE]
const TIMESTAMP = 'x-zm-request-timestamp'
const URL_VALIDATION = 'endpoint.url_validation'

export function zoomScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('zoom', config.secrets)
  return definePreset(config, {
    name: 'zoom',
    headers: zoomHeaders,
    check (payload, headers) {
      return checkV0(keys, payload, headers, { signature: SIGNATURE, timestamp: TIMESTAMP })
    },
    describe (payload, _headers, checked) {
      const body = parseJson(payload)
      const eventType = readPath(body, 'event')
      if (eventType !== URL_VALIDATION) return { eventType }
      const plainToken = readPath(body, 'payload.plainToken') ?? ''
      /* c8 ignore next -- check() always sets secretIndex */
      const key = keys[checked.secretIndex ?? 0] as KeyObject
      const encryptedToken = hmac('sha256', key, plainToken).toString('hex')
      return { eventType, handshake: { statusCode: 200, body: { plainToken, encryptedToken } } }
    }
  })
}
