import type { IncomingHttpHeaders } from 'node:http'

/** A synchronous answer to a provider's handshake (Slack, Zoom, Discord): sent instead of enqueueing. */
export interface Handshake {
  statusCode: number
  /** Undefined for an empty body (204). */
  body?: unknown
}

/** One event of a request whose body carries several (SendGrid's array): its own job, key and type. */
export interface VerifiedEvent {
  /** The event's bytes, as the job's payload. */
  payload: Buffer
  eventId?: string
  eventType?: string
}

/** What a scheme learned from a request it accepted. */
export interface Verified {
  /**
   * The signature in its one canonical form, as it stood in the header. Absent for schemes whose header
   * is the secret itself (GitLab's token), which must never be stored.
   */
  signature?: string
  /** The provider's event id (read only after the signature matched). */
  eventId?: string
  eventType?: string
  /** The signed timestamp, in seconds since the epoch, where the scheme has one. */
  timestamp?: number
  /** Set for handshakes: answered at once, never enqueued. */
  handshake?: Handshake
  /**
   * The answer a provider requires once the event is enqueued, instead of 202 `{ jobId, replayed }`
   * (Discord: a deferred interaction response, or 204 for webhook events).
   */
  acknowledge?: Handshake
  /**
   * Set by schemes whose body is a batch (`batches: true`): each event becomes its own job; `eventId` and
   * `eventType` above are then unset. May be empty.
   */
  events?: VerifiedEvent[]
}

/** What the HTTP layer knows about the request beyond its bytes and headers. */
export interface RequestInfo {
  /** The URL the provider sent to (scheme, host, path and query), for schemes that sign it (Twilio, Square). */
  url?: string
  /** Now, in ms since the epoch (tests pass their own). */
  now?: number
}

/**
 * A signature scheme checks a request on its raw bytes. It throws an Anvil error (401) for a missing,
 * malformed or wrong signature (and ANVIL_ERR_STALE for a signed timestamp outside the tolerance), and
 * reads the body only after the signature matched.
 */
export interface SignatureScheme {
  readonly name: string
  /** Header names that carry signatures; they are redacted from logs and never logged. */
  readonly headers: readonly string[]
  /** True when a verified request is a batch of events (`Verified.events`), answered with one entry per event. */
  readonly batches?: boolean
  verify (payload: Buffer, headers: IncomingHttpHeaders, request?: RequestInfo): Verified
}
