/**
 * The contract of a delivery job: its data, name, queue and id, and the store the delivery worker is given.
 * The outbox (src/outbox/) builds jobs and implements the store over PostgreSQL; the delivery side reads the
 * one and calls the other, and never imports the outbox (forward mode runs it with no database at all).
 */
import type { OutboundScheme } from '../send/sign-outbound.js'
import type { SendResult } from '../send/send-webhook.js'
import type { ClientTls } from '../receiver-auth/client-tls.js'
import type { ClientCredentials } from '../receiver-auth/oauth-client.js'

export const DEFAULT_OUTBOUND_QUEUE_NAME = 'outbound'
export const OUTBOUND_JOB_NAME = 'deliver'

/** `${messageId}.${endpointId}`: the same pair is one job, so a re-dispatch never delivers twice. */
export function outboundJobId (messageId: string, endpointId: string, suffix?: string): string {
  return suffix === undefined ? `${messageId}.${endpointId}` : `${messageId}.${endpointId}.${suffix}`
}

/** No secret ever: the worker loads the endpoint's live secrets when it signs. */
export interface OutboundJobData {
  messageId: string
  endpointId: string
  eventType: string
  url: string
  /** The envelope `{ id, type, timestamp, data }` as JSON, built once so every attempt sends the same bytes. */
  body: string
  scheme: OutboundScheme
  /** A delivery of an operational event: whatever happens to it reports nothing (no event about an event). */
  operational?: boolean
  /**
   * The delays (ms) of its retries after the first try, as the publisher's `retrySchedule` gave them: the
   * delivery worker's backoff reads them here (src/delivery/delivery-schedule.ts `scheduleOf`, which also says
   * what a job made before it carried one gets).
   */
  retry?: number[]
  /**
   * The message's ordering key: this job is the key's head at its endpoint, and its final outcome (a success, or
   * given up) lets the key's next message there go (`DeliveryStore.releaseOrdered`).
   */
  orderingKey?: string
  /**
   * The W3C trace context of its message (src/queue/trace-context.ts): sent as the `traceparent` and `tracestate`
   * headers, or as the attempt span's when the worker traces. Never anything else of the trace (no baggage).
   */
  traceparent?: string
  tracestate?: string
  /** An attempt whose POST was answered while its outcome could not be logged: the next run of that attempt writes it, and sends nothing. */
  answered?: AnsweredAttempt
  /**
   * A keyed job whose final outcome is logged while its key's next message could not be let go yet: its next run
   * only lets it go (src/delivery/ordered-attempt.ts), then ends as the outcome did.
   */
  releasing?: ReleasingOutcome
}

/** How a keyed job whose release waits ends once it is done: completed, or failed for good with `error`. */
export interface ReleasingOutcome {
  error?: string
  /** The failure was an UnrecoverableError. */
  unrecoverable?: boolean
}

/** The outcome of a POST, kept in the job until the delivery log has it. */
export interface AnsweredAttempt {
  attempt: number
  result: SendResult
  deliveryId?: string
  /** The request's headers as the log keeps them. */
  sent?: Record<string, string>
  report: AttemptReport
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
  /** What was sent besides the body, as the log keeps it (src/delivery/attempt-headers.ts). */
  requestHeaders?: Record<string, string>
  /** The answer's headers, as the log keeps them. */
  responseHeaders?: Record<string, string>
  payloadSha256: string
  success: boolean
  /** The row `startAttempt` wrote for this attempt, which `recordAttempt` completes; unset, a row of its own. */
  deliveryId?: string
}

/** An attempt about to POST, written before it so a crash mid-POST leaves it in the log. */
export interface AttemptStart {
  messageId: string
  endpointId: string
  jobId: string
  attempt: number
  payloadSha256: string
}

/** A job run again after an earlier run of it stopped (a stall) or failed. */
export interface ResumedJob extends AttemptStart {
  /** How often BullMQ took the job back as stalled, in all. */
  stalls: number
  /** When the job was made: a success for its message and endpoint since then makes a send of it redundant. */
  since: Date
  /** Set when a stall now is the job's last attempt: its attempts ran out (`message.exhausted`). */
  exhausted?: { eventType: string, operational: boolean }
}

/** What a resumed job finds: see `DeliveryStore.resumeAttempt`. */
export interface ResumedAttempt {
  stalled: boolean
  delivered: boolean
  /**
   * Set when this attempt had logged its outcome before its worker stopped: the stall came after it, so that outcome
   * is the attempt's (nothing is sent again, no stall is counted).
   */
  decided?: { status: 'success' | 'failed', httpStatus: number | null, errorClass: string | null }
}

export interface EndpointState {
  enabled: boolean
  /** Deliveries per second, or null for no limit. */
  rateLimit: number | null
  secrets: string[]
  /** Custom headers sent with each delivery (src/endpoints/endpoint-headers.ts); values never logged. */
  headers?: Record<string, string>
  /** Mutual TLS to the receiver: its CA, client certificate and key (src/receiver-auth/client-tls.ts). */
  tls?: ClientTls
  /** OAuth 2.0 client credentials: a bearer token goes with each delivery (src/receiver-auth/oauth-tokens.ts). */
  oauth?: ClientCredentials
}

/** What the attempt's outcome may report, besides the attempt itself (operational events: src/endpoints/operational-events.ts). */
export interface AttemptReport {
  eventType: string
  /** A delivery of an operational event: nothing is reported about it. */
  operational: boolean
  /** The circuit opened on this failure (or a probe failed, so it stays open). */
  circuitOpened: boolean
  /** The job's last attempt failed: the message's attempts to the endpoint ran out. */
  exhausted: boolean
  /** The job: its exhaustion is reported once, whichever run reports it. */
  jobId?: string
}

/** Where secrets come from and attempts go. Without `recordAttempt` (no database) attempts go to the job's log. */
export interface DeliveryStore {
  /** The live secrets, newest first; `[]` when the endpoint is gone. */
  loadSecrets (endpointId: string): Promise<string[]>
  /** When given, read instead of `loadSecrets`: a disabled or deleted endpoint is not delivered to. */
  loadEndpoint? (endpointId: string): Promise<EndpointState | undefined>
  /**
   * Writes the attempt; `failingSince` (the first failure since the last success) drives auto-disable;
   * `recoveredFrom`, on the success that ends such a run, is logged as the endpoint's recovery. `report` says what
   * the outcome may report (a database store writes operational events in the attempt's transaction).
   */
  recordAttempt? (attempt: DeliveryAttempt, report?: AttemptReport): Promise<{ failingSince?: Date | null, recoveredFrom?: Date } | undefined | void>
  /** True when this call disabled the endpoint (so the hook fires once); `operational`: the delivery of an operational event (reports nothing). */
  disableEndpoint? (endpointId: string, reason: string, operational?: boolean): Promise<boolean>
  /** With `recordAttempt`: writes the attempt as started before its POST, and gives the row's id for `recordAttempt`. */
  startAttempt? (start: AttemptStart): Promise<string>
  /**
   * Before a retry or a run after a stall: the job's attempts left started become failed attempts (`stalled`),
   * a stall before the POST gets a row too; `stalled` is true when the job stalled since the stalls its rows account
   * for, `decided` when that stall came after this attempt's outcome was logged, `delivered` when its message
   * reached the endpoint since the job was made.
   */
  resumeAttempt? (job: ResumedJob): Promise<ResumedAttempt>
  /**
   * A keyed job's outcome is final (a success, or given up): the key's next message to the endpoint may go. Called
   * after the outcome is logged, again after a crash (the job's next run settles it first); repeating it does nothing.
   */
  releaseOrdered? (messageId: string, endpointId: string, orderingKey: string): Promise<void>
  /**
   * The deployment whose jobs this store records (its database's id): the delivery worker claims its queue for
   * it before taking a job, and refuses to start on another deployment's (src/queue/deployment.ts).
   */
  deployment? (): Promise<string>
}
