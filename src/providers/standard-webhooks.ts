/**
 * Standard Webhooks (and Svix, whose `svix-*` headers Clerk and Resend send): HMAC-SHA256 over
 * `<id>.<timestamp>.<body>` with the base64 key after `whsec_`; `webhook-signature` holds space-separated
 * `v1,<base64>` entries (one per active secret while rotating), and any may match.
 */
import { errors } from '../shared/errors.js'
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { parseJson } from '../shared/json.js'
import { readPath } from '../shared/read-path.js'
import { decodeBase64, hmac, hmacKeys, requireMatch } from '../signing/crypto.js'
import { optionalHeader, parseSeconds, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import type { IncomingHttpHeaders } from 'node:http'

const SECRET_PREFIX = 'whsec_'
const NAMES = ['webhook', 'svix'] as const
/** The headers that carry its signature (Svix sends its own names): read by the scheme, redacted from logs. */
export const standardWebhooksHeaders: readonly string[] = NAMES.map((name) => `${name}-signature`)

/** The key bytes of a `whsec_<base64>` (or bare base64) secret. */
export function standardKey (secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new errors.INVALID_OPTIONS('standard-webhooks secrets are "whsec_" followed by base64')
  }
  return Buffer.from(encoded, 'base64')
}

/** `webhook-*` headers, else `svix-*` ones. */
function headerSet (headers: IncomingHttpHeaders): { id: string, timestamp: string, signature: string } {
  const prefix = NAMES.find((name) => headers[`${name}-signature`] !== undefined) ?? NAMES[0]
  return { id: `${prefix}-id`, timestamp: `${prefix}-timestamp`, signature: `${prefix}-signature` }
}

export function standardWebhooksScheme (config: PresetConfig): SignatureScheme {
  if (config.secrets.length === 0) throw new errors.INVALID_OPTIONS('the standard-webhooks preset needs at least one secret')
  const keys = hmacKeys(config.secrets.map(standardKey))
  return definePreset(config, {
    name: 'standard-webhooks',
    headers: standardWebhooksHeaders,
    check (payload, headers) {
      const names = headerSet(headers)
      const value = requireHeader(headers, names.signature)
      const id = requireHeader(headers, names.id)
      const timestamp = requireHeader(headers, names.timestamp)
      const seconds = parseSeconds(timestamp, names.timestamp)
      const given: Buffer[] = []
      for (const entry of value.split(' ')) {
        const comma = entry.indexOf(',')
        // Other versions (v1a: asymmetric) are skipped, not refused: a sender may add them beside v1.
        if (entry.slice(0, comma) === 'v1') given.push(decodeBase64(entry.slice(comma + 1), names.signature))
      }
      if (given.length === 0) throw new errors.SIGNATURE_MALFORMED(names.signature)
      requireMatch(keys.map((key) => hmac('sha256', key, `${id}.${timestamp}.`, payload)), given)
      return { signature: value, timestamp: seconds }
    },
    describe (payload, headers) {
      const names = headerSet(headers)
      return { eventId: optionalHeader(headers, names.id), eventType: readPath(parseJson(payload), 'type') }
    }
  })
}
