/** The constant-time crypto every scheme shares: keys made once, HMACs, and comparisons with no early exit. */
import { createHash, createHmac, createSecretKey, timingSafeEqual, verify, type BinaryLike, type KeyObject } from 'node:crypto'
import { errors } from '../shared/errors.js'

/** The secrets as HMAC keys, made once: an HMAC keyed with a string or Buffer imports the key on every call. */
export function hmacKeys (secrets: ReadonlyArray<string | Buffer>): KeyObject[] {
  return secrets.map((secret) => createSecretKey(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret))
}

export function hmac (algorithm: 'sha256' | 'sha1', key: KeyObject, ...parts: Array<string | Buffer>): Buffer {
  const mac = createHmac(algorithm, key)
  for (const part of parts) mac.update(part)
  return mac.digest()
}

export function sha256Hex (data: BinaryLike): string {
  return createHash('sha256').update(data).digest('hex')
}

/**
 * Compares every expected MAC (one per secret) with every given signature and reports the secret that
 * matched. No early exit: the time depends on how many there are, not on which (if any) matched. A given
 * signature of the wrong length is compared against a zero buffer of the right length, and fails.
 */
export function matchAny (expected: readonly Buffer[], given: readonly Buffer[]): number | undefined {
  let matched: number | undefined
  expected.forEach((mac, index) => {
    for (const candidate of given) {
      const sameLength = candidate.length === mac.length
      const equal = timingSafeEqual(mac, sameLength ? candidate : Buffer.alloc(mac.length))
      if (equal && sameLength) matched = index
    }
  })
  return matched
}

/** True when `given` is `expected`, in constant time; a `given` of another length is compared too, and fails. */
export function constantTimeEqual (expected: Buffer, given: Buffer): boolean {
  return matchAny([expected], [given]) !== undefined
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest()

/**
 * For secrets sent as they are (GitLab's token, the admin token): true when `given` is one of `tokens`. Both
 * sides are hashed first, so neither the length nor which token matched shows in the time; empty never matches.
 */
export function tokenMatcher (tokens: readonly string[]): (given: string) => boolean {
  const expected = tokens.map(digest)
  return (given) => given !== '' && matchAny(expected, [digest(given)]) !== undefined
}

/** Throws SIGNATURE_INVALID unless a secret's MAC matches a given signature; returns the secret's index. */
export function requireMatch (expected: readonly Buffer[], given: readonly Buffer[]): number {
  const matched = matchAny(expected, given)
  if (matched === undefined) throw new errors.SIGNATURE_INVALID()
  return matched
}

/**
 * Throws SIGNATURE_INVALID unless one of the public keys verifies `signature` over `message` (`algorithm`
 * null for Ed25519). Every key is tried: a public-key check leaks nothing secret, but it costs the same either way.
 */
export function requireSignedBy (algorithm: string | null, message: Buffer, keys: readonly KeyObject[], signature: Buffer): void {
  let match = false
  for (const key of keys) match = verify(algorithm, message, key, signature) || match
  if (!match) throw new errors.SIGNATURE_INVALID()
}

/** Decodes strict base64 (padding included); anything else is MALFORMED. */
export function decodeBase64 (value: string, header: string): Buffer {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length % 4 !== 0) throw new errors.SIGNATURE_MALFORMED(header)
  return Buffer.from(value, 'base64')
}

/** Decodes lower-case hex of an exact length in bytes; anything else is MALFORMED. */
export function decodeHex (value: string, bytes: number, header: string): Buffer {
  if (value.length !== bytes * 2 || !/^[0-9a-f]+$/.test(value)) throw new errors.SIGNATURE_MALFORMED(header)
  return Buffer.from(value, 'hex')
}

