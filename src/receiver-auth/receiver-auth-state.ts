/** What the delivery worker reads of an endpoint's authentication to its receiver: the stored columns, their secrets opened. */
import { createHash } from 'node:crypto'
import { openAtRest, type EncryptionKeys } from '../at-rest/encryption-keys.js'
import type { ClientTls, StoredTls } from './client-tls.js'
import type { ClientCredentials, StoredOAuth } from './oauth-client.js'

export interface ReceiverAuth {
  /** Mutual TLS (its own connections: src/receiver-auth/endpoint-dispatchers.ts). */
  tls?: ClientTls
  /** OAuth 2.0 client credentials (src/receiver-auth/oauth-tokens.ts). */
  oauth?: ClientCredentials
}

/** Changes whenever the stored value does: what caches of connections and tokens are keyed by, besides the endpoint. */
const versionOf = (stored: unknown): string => createHash('sha256').update(JSON.stringify(stored)).digest('base64url').slice(0, 16)

export function receiverAuthOf (row: { tls: StoredTls | null, oauth: StoredOAuth | null }, keys: EncryptionKeys | undefined): ReceiverAuth {
  const auth: ReceiverAuth = {}
  const { tls, oauth } = row
  if (tls !== null) {
    auth.tls = { version: versionOf(tls) }
    if (tls.ca !== null) auth.tls.ca = tls.ca
    if (tls.cert !== null && tls.key !== null) {
      auth.tls.cert = tls.cert
      auth.tls.key = openAtRest(keys, tls.key)
    }
  }
  if (oauth !== null) auth.oauth = { ...oauth, clientSecret: openAtRest(keys, oauth.clientSecret), version: versionOf(oauth) }
  return auth
}
