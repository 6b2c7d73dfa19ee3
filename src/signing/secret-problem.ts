/** What a shared secret must be: one rule for the plugin, `WEBHOOK_SECRET` and the sources file. */

/** A shorter HMAC secret can be guessed offline from one captured request. */
export const MIN_SECRET_BYTES = 16

/** How to make one, for the messages. */
const HOW = 'use a random one (e.g. `openssl rand -hex 32`)'

/**
 * What is wrong with a shared secret, completing "`<name>` …" (never quoting it), or undefined. Short secrets
 * pass only when `allowShort` (development), which `allowing` tells how to set; whitespace alone never does.
 */
export function secretProblem (secret: string, allowShort: boolean, allowing: string): string | undefined {
  if (secret.trim() === '') return 'is only whitespace'
  if (allowShort || Buffer.byteLength(secret, 'utf8') >= MIN_SECRET_BYTES) return undefined
  return `is shorter than ${MIN_SECRET_BYTES} bytes: ${HOW}, or ${allowing} for development`
}
