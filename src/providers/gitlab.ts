/**
 * GitLab: `X-Gitlab-Token` is the secret itself. It is compared in constant time (as SHA-256 digests, so
 * the length does not show either) and never stored: the verified request carries no signature.
 */
import { errors } from '../shared/errors.js'
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { tokenMatcher } from '../signing/crypto.js'
import { optionalHeader, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { requireSecrets } from '../signing/preset-keys.js'

const HEADER = 'x-gitlab-token'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const gitlabHeaders: readonly string[] = [HEADER]

export function gitlabScheme (config: PresetConfig): SignatureScheme {
  requireSecrets('gitlab', config.secrets)
  const matches = tokenMatcher(config.secrets)
  return definePreset(config, {
    name: 'gitlab',
    headers: gitlabHeaders,
    check (_payload, headers) {
      if (!matches(requireHeader(headers, HEADER))) throw new errors.SIGNATURE_INVALID()
      return {}
    },
    describe (_payload, headers) {
      return {
        eventId: optionalHeader(headers, 'idempotency-key') ?? optionalHeader(headers, 'x-gitlab-event-uuid'),
        eventType: optionalHeader(headers, 'x-gitlab-event')
      }
    }
  })
}
