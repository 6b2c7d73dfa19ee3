/**
 * GitLab: `X-Gitlab-Token` is the secret itself. It is compared in constant time (as SHA-256 digests, so
 * the length does not show either) and never stored: the verified request carries no signature.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { errors } from '../shared/errors.js'
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { optionalHeader, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { requireSecrets } from './preset-keys.js'

const HEADER = 'x-gitlab-token'

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest()

export function gitlabScheme (config: PresetConfig): SignatureScheme {
  requireSecrets('gitlab', config.secrets)
  const expected = config.secrets.map(digest)
  return definePreset(config, {
    name: 'gitlab',
    headers: [HEADER],
    check (_payload, headers) {
      const given = digest(requireHeader(headers, HEADER))
      let match = false
      for (const token of expected) match = timingSafeEqual(token, given) || match
      if (!match) throw new errors.SIGNATURE_INVALID()
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
