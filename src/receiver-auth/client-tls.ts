/**
 * An endpoint's TLS to its receiver (`tls: { ca, cert, key }`): the CA its server certificate must chain to
 * (instead of the system's), and the client certificate it presents. Checked when saved: every PEM parses and
 * the key is the certificate's. The key is stored sealed (src/at-rest/encryption-keys.ts) and never answered:
 * an endpoint answers only that a certificate is set, its fingerprint, subject and expiry.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto'
import { Type, type Static } from '@sinclair/typebox'
import { errors } from '../shared/errors.js'
import { Nullable } from '../shared/schemas.js'
import type { EncryptionKeys } from '../at-rest/encryption-keys.js'

export const MAX_PEM_CHARS = 65_536
const Pem = () => Type.String({ minLength: 1, maxLength: MAX_PEM_CHARS })

/** As given: a CA alone (trust a private CA), a certificate with its key (present it), or all three. */
export const TlsInputSchema = Type.Object({
  /** PEM of the CA certificates the receiver's certificate must chain to, in place of the system's. @defaultValue the system's CAs */
  ca: Type.Optional(Pem()),
  /** PEM of the client certificate (and its chain) presented to the receiver. @defaultValue none */
  cert: Type.Optional(Pem()),
  /** PEM of the certificate's private key: stored encrypted, never answered. @defaultValue none */
  key: Type.Optional(Pem())
}, { additionalProperties: false, minProperties: 1 })
export type TlsInput = Static<typeof TlsInputSchema>

/** The `tls` column (migration 0026): the key sealed. */
export const StoredTlsSchema = Type.Object({
  ca: Nullable(Type.String()),
  cert: Nullable(Type.String()),
  key: Nullable(Type.String()),
  fingerprint: Nullable(Type.String()),
  subject: Nullable(Type.String()),
  expiresAt: Nullable(Type.String())
})
export type StoredTls = Static<typeof StoredTlsSchema>

/** What an endpoint answers of its `tls`. */
export const TlsSummarySchema = Nullable(Type.Object({
  /** A CA of its own is trusted for the receiver's certificate. */
  ca: Type.Boolean(),
  /** The client certificate presented, when one is set: its SHA-256 fingerprint, subject and expiry; never its key. */
  certificate: Nullable(Type.Object({ fingerprint: Type.String(), subject: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }))
}))
export type TlsSummary = Static<typeof TlsSummarySchema>

export function tlsSummary (stored: StoredTls | null): TlsSummary {
  if (stored === null) return null
  const certificate = stored.fingerprint === null ? null : { fingerprint: stored.fingerprint, subject: stored.subject ?? '', expiresAt: stored.expiresAt ?? '' }
  return { ca: stored.ca !== null, certificate }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g

/** Each certificate of a PEM bundle; refused when there is none or one does not parse. */
function certificates (pem: string, field: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERTIFICATE) ?? []
  if (blocks.length === 0) throw new errors.INVALID_ENDPOINT(`tls.${field}: no PEM certificate (-----BEGIN CERTIFICATE-----) found`)
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block)
    } catch (err) {
      throw new errors.INVALID_ENDPOINT(`tls.${field}: certificate ${i + 1} does not parse (${(err as Error).message})`)
    }
  })
}

function privateKey (pem: string): KeyObject {
  try {
    return createPrivateKey(pem)
  } catch {
    // Never quote the key or the parser's words about it.
    throw new errors.INVALID_ENDPOINT('tls.key: not a PEM private key (unencrypted PKCS#8, PKCS#1 or SEC1)')
  }
}

/** `tls` as stored, checked; the key sealed. Throws INVALID_ENDPOINT, or ENCRYPTION_KEY_REQUIRED for a key without keys. */
export function storedTls (input: TlsInput, url: string | undefined, keys: EncryptionKeys | undefined): StoredTls {
  if ((input.cert === undefined) !== (input.key === undefined)) throw new errors.INVALID_ENDPOINT('tls: cert and key go together (a client certificate and its private key)')
  if (url !== undefined && !url.startsWith('https:')) throw new errors.INVALID_ENDPOINT('tls: the endpoint URL must be https')
  if (input.ca !== undefined) certificates(input.ca, 'ca')
  const stored: StoredTls = { ca: input.ca ?? null, cert: null, key: null, fingerprint: null, subject: null, expiresAt: null }
  if (input.cert === undefined || input.key === undefined) return stored
  const [leaf] = certificates(input.cert, 'cert') as [X509Certificate]
  if (!leaf.checkPrivateKey(privateKey(input.key))) throw new errors.INVALID_ENDPOINT('tls: the key is not the certificate\'s (the first certificate of tls.cert)')
  if (keys === undefined) throw new errors.ENCRYPTION_KEY_REQUIRED('tls.key')
  return {
    ...stored,
    cert: input.cert,
    key: keys.seal(input.key),
    fingerprint: leaf.fingerprint256,
    subject: leaf.subject.replace(/\n/g, ', '),
    expiresAt: new Date(leaf.validTo).toISOString()
  }
}

/** What the delivery worker connects with: the key opened; `version` changes whenever the stored `tls` does. */
export interface ClientTls {
  ca?: string
  cert?: string
  key?: string
  version: string
}
