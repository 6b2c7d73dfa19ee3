/**
 * Ed25519 keys as Standard Webhooks writes them (`v1a` signatures): a signing key `whsk_` + base64 of the 64-byte
 * secret key (seed, then public key, as libsodium keeps it), kept by Anvil; a public key `whpk_` + base64 of the
 * 32 raw bytes, which a receiver verifies with.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'

export const SIGNING_KEY_PREFIX = 'whsk_'
export const PUBLIC_KEY_PREFIX = 'whpk_'

/** DER headers that make 32 raw bytes a PKCS#8 private key or an SPKI public key (RFC 8410). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

export interface Ed25519Keys {
  /** `whsk_…`: never leaves Anvil. */
  signingKey: string
  /** `whpk_…`: what the receiver verifies with. */
  publicKey: string
}

export function newEd25519Keys (): Ed25519Keys {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_PREFIX.length)
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length)
  return { signingKey: SIGNING_KEY_PREFIX + Buffer.concat([seed, raw]).toString('base64'), publicKey: PUBLIC_KEY_PREFIX + raw.toString('base64') }
}

/** The `whpk_` public key of a `whsk_` signing key. */
export function publicKeyOf (signingKey: string): string {
  return PUBLIC_KEY_PREFIX + Buffer.from(signingKey.slice(SIGNING_KEY_PREFIX.length), 'base64').subarray(32, 64).toString('base64')
}

/** A `whsk_` key as a KeyObject (import it once: the callers cache it). */
export function signingKeyObject (signingKey: string): KeyObject {
  const seed = Buffer.from(signingKey.slice(SIGNING_KEY_PREFIX.length), 'base64').subarray(0, 32)
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' })
}

/** A `whpk_` key as a KeyObject, for a verifier. */
export function publicKeyObject (publicKey: string): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(publicKey.slice(PUBLIC_KEY_PREFIX.length), 'base64')]), format: 'der', type: 'spki' })
}

/** The base64 Ed25519 signature of `parts`, concatenated. */
export function ed25519Sign (key: KeyObject, ...parts: Array<string | Buffer>): string {
  return sign(null, Buffer.concat(parts.map((part) => typeof part === 'string' ? Buffer.from(part, 'utf8') : part)), key).toString('base64')
}
