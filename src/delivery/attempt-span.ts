/**
 * The span of one POST of a traced message (kind CLIENT, the child of its dispatch): its context is what the receiver
 * gets as `traceparent`, so the receiver's own span is the attempt's child. The endpoint's URL is not an attribute:
 * its query may hold a credential.
 */
import type { Job } from 'bullmq'
import type { Telemetry } from '../queue/telemetry.js'
import { SpanKind, startSpan, traceContextOf, type TraceContext } from '../queue/trace-context.js'
import type { OutboundJobData } from './delivery-job.js'
import type { SendResult } from '../send/send-webhook.js'

export interface AttemptSpan {
  readonly context: TraceContext | undefined
  end (result: SendResult): void
}

/** Undefined without telemetry or for a message outside a trace: its POST then carries the job's context, if any. */
export function attemptSpan (telemetry: Telemetry | undefined, job: Job<OutboundJobData>): AttemptSpan | undefined {
  const parent = telemetry === undefined ? undefined : traceContextOf(job.data.traceparent, job.data.tracestate)
  if (telemetry === undefined || parent === undefined) return undefined
  const { messageId, endpointId, eventType } = job.data
  const span = startSpan(telemetry, `attempt ${eventType}`, SpanKind.CLIENT, parent, {
    'anvil.message.id': messageId, 'anvil.endpoint.id': endpointId, 'anvil.attempt': job.attemptsMade + 1, 'http.request.method': 'POST'
  })
  return {
    context: span.context,
    end (result) {
      if (result.httpStatus !== undefined) span.setAttribute('http.response.status_code', result.httpStatus)
      span.end(result.success ? undefined : new Error(`${result.errorClass ?? 'failed'}: ${result.errorMessage ?? `HTTP ${result.httpStatus ?? ''}`}`))
    }
  }
}
