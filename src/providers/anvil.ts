import { createHmac } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { errors } from '../shared/errors.js'
import { hmac, hmacKeys, requireMatch } from '../signing/crypto.js'
import type { SignatureScheme } from '../signing/signature-scheme.js'

const ANVIL_HEADER = 'x-signature'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const anvilHeaders: readonly string[] = [ANVIL_HEADER]
const ANVIL_PREFIX = 'sha256='
/** Exactly 64 lower-case hex digits: upper case, odd lengths and extra digits are refused, not normalised. */
const ANVIL_VALUE = /^sha256=[0-9a-f]{64}$/

function headerValue (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  // A repeated header is ambiguous; refuse it rather than pick one.
  return Array.isArray(value) ? undefined : value
}

/**
 * The original Anvil scheme: `x-signature: sha256=<hex>`, HMAC-SHA256 over the raw body.
 * Several secrets may be given (rotation); each is tried with a constant-time compare.
 */
export function anvilHmacScheme (secrets: readonly string[]): SignatureScheme {
  if (secrets.length === 0) throw new errors.INVALID_OPTIONS('at least one secret is required')
  const keys = hmacKeys(secrets)
  return {
    name: 'anvil',
    headers: anvilHeaders,
    verify (payload, headers) {
      const raw = headers[ANVIL_HEADER]
      if (raw === undefined) throw new errors.SIGNATURE_MISSING(ANVIL_HEADER)
      const value = headerValue(headers, ANVIL_HEADER)
      if (value === undefined || !ANVIL_VALUE.test(value)) throw new errors.SIGNATURE_MALFORMED(ANVIL_HEADER)
      const given = Buffer.from(value.slice(ANVIL_PREFIX.length), 'hex')
      requireMatch(keys.map((key) => hmac('sha256', key, payload)), [given])
      return { signature: value }
    }
  }
}

/** Signs a payload the way `anvilHmacScheme` expects: the header value `sha256=<hex>`. */
export function signAnvil (secret: string, payload: Buffer | string): string {
  return ANVIL_PREFIX + createHmac('sha256', secret).update(payload).digest('hex')
}
