/**
 * The database side's additions to the job and store contract of src/outbound/delivery/delivery-job.ts
 * (INTERFACE.md): deterministic job ids, and the store as the database implements it.
 */
import type { AttemptStart, DeliveryAttempt, DeliveryStore, EndpointState, ResumedJob } from './delivery/delivery-job.js'
import type { OutboundScheme } from './delivery/sign-outbound.js'

/** `${messageId}.${endpointId}`: the same pair is one job, so a re-dispatch never delivers twice. */
export function outboundJobId (messageId: string, endpointId: string, suffix?: string): string {
  return suffix === undefined ? `${messageId}.${endpointId}` : `${messageId}.${endpointId}.${suffix}`
}

export interface RecordedAttempt {
  deliveryId: string
  /** When the endpoint's run of failures began; null after a success. Drives auto-disable. */
  failingSince: Date | null
  /** On a success that ended a run of failures (once per run): when that run began. */
  recoveredFrom?: Date
}

/** What the database knows of an endpoint at delivery time. */
export interface StoredEndpointState extends EndpointState {
  scheme: OutboundScheme
}

/** The delivery store with every optional member there, as PostgreSQL provides it. */
export interface DatabaseDeliveryStore extends DeliveryStore {
  loadEndpoint (endpointId: string): Promise<StoredEndpointState | undefined>
  /** Writes the attempt (completing its started row) and the endpoint's last delivery in one transaction. */
  recordAttempt (attempt: DeliveryAttempt): Promise<RecordedAttempt>
  startAttempt (start: AttemptStart): Promise<string>
  resumeAttempt (job: ResumedJob): Promise<{ stalled: boolean, delivered: boolean }>
  /** True when this call disabled it (false: already disabled, or gone). */
  disableEndpoint (endpointId: string, reason: string): Promise<boolean>
  /** Drops what the cache holds for an endpoint (after a rotation or an edit in this process). */
  forget (endpointId: string): void
}
