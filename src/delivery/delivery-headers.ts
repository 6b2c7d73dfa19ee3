/**
 * The headers of one attempt: the endpoint's custom headers, then what Anvil sets (signature, body type, user
 * agent, trace context), which no custom header may name (src/endpoints/endpoint-headers.ts). Also the copy the delivery log
 * keeps, each custom value `[redacted]` whatever its name, since it may be a credential.
 */
import { signatureHeaders } from '../send/sign-outbound.js'
import { REDACTED } from '../send/attempt-headers.js'
import type { EndpointState, OutboundJobData } from './delivery-job.js'
import type { TraceContext } from '../queue/trace-context.js'

const CONTENT_TYPE = 'application/json'
const USER_AGENT = 'anvil-webhooks'

export interface AttemptHeaders {
  /** What is sent. */
  sent: Record<string, string>
  /** What the log may keep: the same, custom values redacted. */
  logged: Record<string, string>
}

/** `trace`: the attempt span's context, else the job's (the message's trace) is sent. */
export function attemptHeaders (data: OutboundJobData, state: EndpointState, timestamp: number, trace?: TraceContext): AttemptHeaders {
  const own = signatureHeaders({ scheme: data.scheme, id: data.messageId, type: data.eventType, timestamp, body: data.body, secrets: state.secrets })
  own['content-type'] = CONTENT_TYPE
  own['user-agent'] = USER_AGENT
  const traceparent = trace?.traceparent ?? data.traceparent
  if (traceparent !== undefined) {
    own.traceparent = traceparent
    const tracestate = trace === undefined ? data.tracestate : trace.tracestate
    if (tracestate !== undefined) own.tracestate = tracestate
  }
  const custom = state.headers ?? {}
  const sent: Record<string, string> = { ...custom, ...own }
  const logged: Record<string, string> = { ...own }
  for (const name of Object.keys(custom)) if (!(name in own)) logged[name] = REDACTED
  // The bearer token is added when sent (src/receiver-auth/send-to-receiver.ts); the log says it went.
  if (state.oauth !== undefined) logged.authorization = REDACTED
  return { sent, logged }
}
