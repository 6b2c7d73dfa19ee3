/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 over the raw body (the form bytes for
 * form-encoded hooks). The legacy SHA-1 `X-Hub-Signature` is never accepted.
 */
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { decodeHex, hmac, requireMatch } from '../signing/crypto.js'
import { optionalHeader, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { presetKeys } from '../signing/preset-keys.js'
import { errors } from '../shared/errors.js'

const HEADER = 'x-hub-signature-256'
/** The headers that carry its signature (`x-hub-signature` is GitHub's legacy SHA-1 one): read by the scheme, redacted from logs. */
export const githubHeaders: readonly string[] = [HEADER, 'x-hub-signature']
const PREFIX = 'sha256='

export function githubScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('github', config.secrets)
  return definePreset(config, {
    name: 'github',
    headers: githubHeaders,
    check (payload, headers) {
      const value = requireHeader(headers, HEADER)
      if (!value.startsWith(PREFIX)) throw new errors.SIGNATURE_MALFORMED(HEADER)
      const given = decodeHex(value.slice(PREFIX.length), 32, HEADER)
      requireMatch(keys.map((key) => hmac('sha256', key, payload)), [given])
      return { signature: value }
    },
    describe (_payload, headers) {
      return { eventId: optionalHeader(headers, 'x-github-delivery'), eventType: optionalHeader(headers, 'x-github-event') }
    }
  })
}
