/**
 * An event with all the journal holds of it, as the admin API answers it: type imports only, so the console
 * (console/src) takes these very declarations instead of copying them.
 */
import type { EventItem } from './event-item.js'

export interface EventEffect { action: string, key: string, result: unknown, createdAt: string }

export interface EventAttempt {
  attempt: number
  status: 'done' | 'failed'
  startedAt: string | null
  finishedAt: string
  errorClass: string | null
  error: string | null
  jobId: string | null
}

export interface Change { path: string, before?: unknown, after?: unknown }

/** How a delivery of an event id differs from the one before it (src/event-log/delivery-diff.ts). */
export interface DeliveryDiff {
  receivedAt: unknown
  jobId: unknown
  payloadChanged: boolean
  /** Changed JSON fields (`data.object.amount`) when both payloads are JSON; at most 100. */
  changes: Change[]
  headers: Change[]
}

export interface EventDetail extends EventItem {
  /** The payload as received: as text when it is UTF-8, else base64 (`payloadEncoding` says which). */
  payload: string
  payloadEncoding: 'utf8' | 'base64'
  /** The JSON view, when the payload is JSON. */
  json?: unknown
  contentType: string | null
  headers: Record<string, string>
  signature: string | null
  requestId: string | null
  jobId: string | null
  processedAt: string | null
  deliveries: number
  replays: number
  effects: EventEffect[]
  /** Every attempt a worker finished, oldest first (a replay's attempts follow the earlier ones; `attempts` is the count since the last replay). */
  attemptLog: EventAttempt[]
  /** How this delivery differs from the previous one of the same id, when there was one that differs. */
  previousDelivery?: DeliveryDiff
}
