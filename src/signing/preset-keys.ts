import type { KeyObject } from 'node:crypto'
import { errors } from '../shared/errors.js'
import { hmacKeys } from './crypto.js'

export function requireSecrets (name: string, secrets: readonly string[]): void {
  if (secrets.length === 0) throw new errors.INVALID_OPTIONS(`the ${name} preset needs at least one secret`)
}

/** An HMAC preset's keys: at least one secret, each made into a key once (`hmacKeys`). */
export function presetKeys (name: string, secrets: readonly string[]): KeyObject[] {
  requireSecrets(name, secrets)
  return hmacKeys(secrets)
}
