// An endpoint as the pages use it, and its one-word state: the list's badge and the endpoint page's.
export interface Endpoint {
  id: string, url: string, tenant: string | null, eventTypes: string[], description: string, enabled: boolean,
  disabledReason: string | null, lastDeliveryAt: string | null, lastDeliveryStatus: string | null, failingSince: string | null,
  /** Custom headers' names; their values are never answered. */
  headerNames: string[]
  /** `ed25519`: signed `v1a`, verified with `publicKey` (whpk_…), no secret to share. */
  signing: 'hmac' | 'ed25519', publicKey: string | null
  /** Mutual TLS: whether its own CA is trusted, and the client certificate's fingerprint, subject and expiry (never its key). */
  tls: { ca: boolean, certificate: { fingerprint: string, subject: string, expiresAt: string } | null } | null
  /** OAuth 2.0 client credentials, the secret never answered. */
  oauth: { tokenUrl: string, clientId: string, scope: string | null, audience: string | null, authStyle: 'basic' | 'body' } | null
}

export interface EndpointSummary { endpointId: string, success: number, failed: number, successRate: number | null, lastAttemptAt: string | null }

export type EndpointState = 'enabled' | 'failing' | 'disabled'

export const stateOf = (e: Endpoint): EndpointState => !e.enabled ? 'disabled' : e.failingSince !== null ? 'failing' : 'enabled'

/** "97.5 %", or a dash with no attempt. */
export const percent = (rate: number | null): string => rate === null ? '—' : `${(Math.floor(rate * 1000) / 10).toString()} %`

export const typesOf = (value: string): string[] => value.split(/[\s,]+/).filter((t) => t !== '')
