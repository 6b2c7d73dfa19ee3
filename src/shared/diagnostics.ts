/**
 * What Anvil does, published on `node:diagnostics_channel`, so the core stays free of any metrics or
 * tracing library: plugins/metrics/metrics.ts subscribes (prom-client), and so can anything else
 * (`diagnostics_channel.subscribe('anvil:ingress:enqueued', …)`). Publishing with no subscriber costs
 * one `hasSubscribers` check.
 */
import { channel, type Channel } from 'node:diagnostics_channel'

/** Labels every event carries. `eventType` is unknown for webhooks whose scheme does not read one. */
export interface EventLabels {
  source: string
  provider?: string
  eventType?: string
}

/**
 * Why a request was refused. `stale`: a timestamped signature outside its tolerance. `aborted`: the client
 * went away before its body was complete; `timeout`: the body was not complete within the server's request
 * timeout (answered 408). Those two are network trouble or a slow client, never a forgery.
 */
export type RejectionReason = 'bad_signature' | 'stale' | 'malformed' | 'too_large' | 'aborted' | 'timeout'

export interface ReceivedMessage extends EventLabels {}
export interface VerifiedMessage extends EventLabels {}
/** One verified webhook event (each event of a batch), before it is enqueued: its type is the signed one. */
export interface EventReceivedMessage extends EventLabels {}
export interface RejectedMessage extends EventLabels {
  reason: RejectionReason
  /** The refusal's error code (`ANVIL_ERR_SIGNATURE_MALFORMED`, …), where it had one: finer than the reason. */
  code?: string
}
export interface EnqueuedMessage extends EventLabels {
  jobId: string
  /** True when the key was seen within the dedupe window: a duplicate, no new job. */
  duplicate: boolean
}
/** One HTTP answer of the webhook route, whatever its status. */
export interface RespondedMessage extends EventLabels { statusCode: number, durationMs: number }
export interface ProcessedMessage extends EventLabels { jobId: string, attempt: number, receivedToHandledMs: number }
export interface FailedMessage extends EventLabels { jobId: string, attempt: number }
export interface DeadLetteredMessage extends EventLabels { jobId: string, deadLetterId: string }
export interface ReplayedMessage extends EventLabels { deadLetterId: string, jobId: string }

/** The channels, by name. Names are stable API. */
export const channels = {
  received: channel('anvil:ingress:received') as Channel<ReceivedMessage>,
  verified: channel('anvil:ingress:verified') as Channel<VerifiedMessage>,
  rejected: channel('anvil:ingress:rejected') as Channel<RejectedMessage>,
  eventReceived: channel('anvil:ingress:event-received') as Channel<EventReceivedMessage>,
  enqueued: channel('anvil:ingress:enqueued') as Channel<EnqueuedMessage>,
  responded: channel('anvil:ingress:responded') as Channel<RespondedMessage>,
  processed: channel('anvil:worker:processed') as Channel<ProcessedMessage>,
  failed: channel('anvil:worker:failed') as Channel<FailedMessage>,
  deadLettered: channel('anvil:worker:dead-lettered') as Channel<DeadLetteredMessage>,
  replayed: channel('anvil:replay:replayed') as Channel<ReplayedMessage>
} as const

export type ChannelName = keyof typeof channels
export type MessageOf<N extends ChannelName> = (typeof channels)[N] extends Channel<infer M> ? M : never

/** Publishes only when someone listens, so building the message costs nothing otherwise. */
export function publish<N extends ChannelName> (name: N, message: () => MessageOf<N>): void {
  const target = channels[name] as Channel<MessageOf<N>>
  if (target.hasSubscribers) target.publish(message())
}

/**
 * The rejection reason of a refused request, from its error code and status; undefined when the answer
 * is not a rejection (a 503, say). Codes other schemes add map by their words (STALE, EXPIRED, TOLERANCE).
 */
export function rejectionReason (code: string | undefined, statusCode: number): RejectionReason | undefined {
  if (code === 'ANVIL_ERR_BODY_TOO_LARGE' || statusCode === 413) return 'too_large'
  if (code !== undefined && /STALE|EXPIRED|TOLERANCE|TIMESTAMP/.test(code)) return 'stale'
  if (code === 'ANVIL_ERR_SIGNATURE_INVALID') return 'bad_signature'
  if (statusCode === 400 || statusCode === 401 || statusCode === 415) {
    return code === 'ANVIL_ERR_SIGNATURE_MISSING' || code === 'ANVIL_ERR_SIGNATURE_MALFORMED' || statusCode !== 401
      ? 'malformed'
      : 'bad_signature'
  }
  return undefined
}

/** Publishes the outcome of an enqueue and hands the result back, so a call site stays one expression. */
export function noteEnqueued<R extends { jobId: string, replayed: boolean }> (labels: EventLabels, result: R): R {
  // Fields spelled out: a spread of an object of unknown shape is the slow path, and this runs per event.
  publish('enqueued', () => ({ source: labels.source, provider: labels.provider, eventType: labels.eventType, jobId: result.jobId, duplicate: result.replayed }))
  return result
}

/** The labels of a job's data (a sweep may see data from an older version: every field is optional there). */
export function labelsOf (data: Partial<EventLabels> | undefined): EventLabels {
  return { source: data?.source ?? 'unknown', provider: data?.provider, eventType: data?.eventType }
}
