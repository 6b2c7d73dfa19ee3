/**
 * The worker's side of forward mode: a handler that POSTs each event of a forwarding source to its URL
 * through the delivery engine (SSRF guard, timeout, capped answer, signature). A failure throws, so the
 * inbound job's own retries and dead letters apply. Without a database, each attempt goes to the job's log.
 */
import { UnrecoverableError } from 'bullmq'
import type { lookup } from 'node:dns'
import { redactUrl } from '../shared/redact-url.js'
import { sha256Hex } from '../signing/crypto.js'
import { DEFAULT_PROVIDER } from '../providers/presets.js'
import type { SourceOptions } from '../inbound/source-options.js'
import type { HandlerContext, WebhookHandler } from '../worker/worker.js'
import type { WebhookEvent } from '../worker/webhook-event.js'
import type { DeliveryAttempt } from '../delivery/delivery-job.js'
import { publishOutbound } from '../delivery/outbound-channels.js'
import { DEFAULT_DELIVERY_TIMEOUT_MS, DEFAULT_RESPONSE_CAP_BYTES, RESPONSE_BODY_TIMEOUT_MS } from '../delivery/delivery-options.js'
import { createGuardedDispatcher } from '../send/guarded-dispatcher.js'
import { sendWebhook } from '../send/send-webhook.js'
import { signatureHeaders } from '../send/sign-outbound.js'
import { forwardProblem, type ForwardOptions } from './forward-options.js'
import { throwInvalid } from '../shared/validate.js'

export interface ForwarderOptions {
  /** Networks reachable despite the SSRF guard (`ANVIL_FORWARD_ALLOW_NETS`). */
  allowNets?: string | readonly string[]
  timeoutMs?: number
  responseCapBytes?: number
  /** Runs events of sources that do not forward; without it they fail. */
  fallback?: WebhookHandler
  onAttempt?: (attempt: DeliveryAttempt) => void
  lookup?: typeof lookup
}

export interface Forwarder {
  handler: WebhookHandler
  /** The sources that forward, by name. */
  readonly targets: ReadonlyMap<string, ForwardOptions>
  /** Closes the connections it keeps to the receivers. */
  close (): Promise<void>
}

/** A header value as sent: printable ASCII only, else left out (a provider's id is never anything else). */
const headerSafe = (value: string | undefined): value is string => value !== undefined && /^[\x20-\x7e]{1,512}$/.test(value)

export function createForwarder (sources: readonly SourceOptions[], options: ForwarderOptions = {}): Forwarder {
  const targets = new Map<string, ForwardOptions>()
  sources.forEach((source, index) => {
    if (source.forward === undefined) return
    throwInvalid(forwardProblem(source.forward, false), `sources.${index}.forward.`)
    targets.set(source.name ?? source.provider ?? DEFAULT_PROVIDER, source.forward)
  })
  const timeoutMs = options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS
  const dispatcher = createGuardedDispatcher({ allowNets: options.allowNets, connectTimeoutMs: timeoutMs, lookup: options.lookup })
  const send = { dispatcher, timeoutMs, responseCapBytes: options.responseCapBytes ?? DEFAULT_RESPONSE_CAP_BYTES, bodyTimeoutMs: RESPONSE_BODY_TIMEOUT_MS }

  async function forward (event: WebhookEvent, context: HandlerContext | undefined, target: ForwardOptions): Promise<void> {
    // The provider's event id when it has one, else the job's: the same on every attempt, for the receiver's dedupe.
    const id = event.eventId ?? event.id
    const timestamp = Math.floor(Date.now() / 1000)
    const headers: Record<string, string> = {
      'content-type': event.contentType ?? 'application/json',
      'user-agent': 'anvil-webhooks',
      'anvil-source': event.source,
      ...signatureHeaders({ scheme: target.scheme ?? 'standard-webhooks', id, type: event.eventType ?? '', timestamp, body: event.payload, secrets: [target.secret] })
    }
    if (headerSafe(event.provider)) headers['anvil-provider'] = event.provider
    if (headerSafe(event.eventId)) headers['anvil-event-id'] = event.eventId
    if (headerSafe(event.eventType)) headers['anvil-event-type'] = event.eventType
    const result = await sendWebhook({ url: target.url, headers, body: event.payload }, send)
    const attempt: DeliveryAttempt = {
      messageId: id,
      endpointId: `forward:${event.source}`,
      attempt: event.attempt,
      ...(result.httpStatus === undefined ? {} : { httpStatus: result.httpStatus }),
      durationMs: result.durationMs,
      ...(result.errorClass === undefined ? {} : { errorClass: result.errorClass, errorMessage: result.errorMessage }),
      responseHead: result.responseHead,
      payloadSha256: sha256Hex(event.payload),
      success: result.success
    }
    await context?.log(JSON.stringify(attempt))
    options.onAttempt?.(attempt)
    publishOutbound('delivered', () => ({
      endpointId: attempt.endpointId, eventType: event.eventType ?? 'unknown', outcome: result.success ? 'success' : result.errorClass ?? 'failed', durationMs: result.durationMs
    }))
    if (!result.success) {
      throw new Error(`forward to ${redactUrl(target.url)} failed: ${result.errorClass ?? 'failed'}: ${result.errorMessage ?? ''}`)
    }
  }

  return {
    targets,
    handler: async (event, context) => {
      const target = targets.get(event.source)
      if (target !== undefined) return await forward(event, context, target)
      if (options.fallback !== undefined) return await options.fallback(event, context)
      throw new UnrecoverableError(`source "${event.source}" neither forwards nor has a handler`)
    },
    async close () {
      await dispatcher.close()
    }
  }
}
