/**
 * A delivery job's data and the store the delivery worker is given, as pinned in the issue-17 interface
 * (the database side builds jobs and the store; the delivery side reads the one and calls the other).
 */
import type { OutboundScheme } from './sign-outbound.js'

export const DEFAULT_OUTBOUND_QUEUE_NAME = 'outbound'
export const OUTBOUND_JOB_NAME = 'deliver'

/** No secret ever: the worker loads the endpoint's live secrets when it signs. */
export interface OutboundJobData {
  messageId: string
  endpointId: string
  eventType: string
  url: string
  /** The envelope `{ id, type, timestamp, data }` as JSON, built once so every attempt sends the same bytes. */
  body: string
  scheme: OutboundScheme
}

export interface DeliveryAttempt {
  messageId: string
  endpointId: string
  attempt: number
  httpStatus?: number
  durationMs: number
  errorClass?: string
  errorMessage?: string
  responseHead: string
  payloadSha256: string
  success: boolean
}

export interface EndpointState {
  enabled: boolean
  /** Deliveries per second, or null for no limit. */
  rateLimit: number | null
  secrets: string[]
}

/** Where secrets come from and attempts go. Without `recordAttempt` (no database) attempts go to the job's log. */
export interface DeliveryStore {
  /** The live secrets, newest first; `[]` when the endpoint is gone. */
  loadSecrets (endpointId: string): Promise<string[]>
  /** When given, read instead of `loadSecrets`: a disabled or deleted endpoint is not delivered to. */
  loadEndpoint? (endpointId: string): Promise<EndpointState | undefined>
  /**
   * Writes the attempt; `failingSince` (the first failure since the last success) drives auto-disable;
   * `recoveredFrom`, on the success that ends such a run, is logged as the endpoint's recovery.
   */
  recordAttempt? (attempt: DeliveryAttempt): Promise<{ failingSince?: Date | null, recoveredFrom?: Date } | undefined | void>
  /** True when this call disabled the endpoint (so the hook fires once). */
  disableEndpoint? (endpointId: string, reason: string): Promise<boolean>
}
