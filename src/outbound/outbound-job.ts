/**
 * What the database side of outgoing webhooks hands the delivery side: the job in Redis (never a secret) and
 * the store the delivery worker reads secrets from and writes each attempt to (INTERFACE.md).
 */
export const DEFAULT_OUTBOUND_QUEUE_NAME = 'outbound'
export const OUTBOUND_JOB_NAME = 'deliver'

export const ENDPOINT_SCHEMES = ['standard-webhooks', 'stripe'] as const
export type EndpointScheme = typeof ENDPOINT_SCHEMES[number]

export interface OutboundJobData {
  messageId: string
  endpointId: string
  /** The public event type. */
  eventType: string
  url: string
  /** The envelope `{ id, type, timestamp, data }` as sent, built once at dispatch. */
  body: string
  scheme: EndpointScheme
}

/** `${messageId}.${endpointId}`: the same pair is one job, so a re-dispatch never delivers twice. */
export function outboundJobId (messageId: string, endpointId: string, suffix?: string): string {
  return suffix === undefined ? `${messageId}.${endpointId}` : `${messageId}.${endpointId}.${suffix}`
}

export interface DeliveryAttempt {
  messageId: string
  endpointId: string
  /** 1 for the first try. */
  attempt: number
  httpStatus?: number
  durationMs: number
  errorClass?: string
  errorMessage?: string
  /** The start of the response body; cut to 4 KiB again when stored. */
  responseHead?: string
  payloadSha256: string
  success: boolean
}

export interface RecordedAttempt {
  deliveryId: string
  /** When the endpoint's run of failures began; null after a success. Drives auto-disable. */
  failingSince: Date | null
}

export interface EndpointState {
  enabled: boolean
  scheme: EndpointScheme
  /** Deliveries per second; null is no limit. */
  rateLimit: number | null
  /** Live secrets, newest first. */
  secrets: string[]
}

export interface DeliveryStore {
  /** The endpoint's live secrets, newest first, cached briefly; [] when the endpoint is gone. */
  loadSecrets (endpointId: string): Promise<string[]>
  loadEndpoint (endpointId: string): Promise<EndpointState | undefined>
  /** Writes the attempt and the endpoint's last delivery in one transaction. */
  recordAttempt (attempt: DeliveryAttempt): Promise<RecordedAttempt>
  /** True when this call disabled it (false: already disabled, or gone). */
  disableEndpoint (endpointId: string, reason: string): Promise<boolean>
  /** Drops what the cache holds for an endpoint (after a rotation or an edit in this process). */
  forget (endpointId: string): void
}
