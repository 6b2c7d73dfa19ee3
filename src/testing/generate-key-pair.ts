import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { errors } from '../shared/errors.js'

export interface TestKeyPair {
  /** Signs: the `secret` of `signRequest`. */
  privateKey: KeyObject
  /** The private key as PKCS#8 PEM (for `anvil send --secret-file`, or an environment variable). */
  privateKeyPem: string
  /** Verifies: what goes in the source's `secrets`, written as the provider shows it (Discord: hex; SendGrid: base64 DER). */
  publicKey: string
}

/** A key pair for the providers that sign with one: Discord (Ed25519) and SendGrid (ECDSA P-256). */
export function generateKeyPair (provider: 'discord' | 'sendgrid'): TestKeyPair {
  if (provider !== 'discord' && provider !== 'sendgrid') {
    throw new errors.INVALID_OPTIONS(`generateKeyPair: only discord and sendgrid sign with a key pair (got ${JSON.stringify(provider)})`)
  }
  const { privateKey, publicKey } = provider === 'discord'
    ? generateKeyPairSync('ed25519')
    : generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const der = publicKey.export({ format: 'der', type: 'spki' })
  return {
    privateKey,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    // Discord shows the raw 32 key bytes (the end of the DER); SendGrid the whole DER.
    publicKey: provider === 'discord' ? der.subarray(-32).toString('hex') : der.toString('base64')
  }
}
