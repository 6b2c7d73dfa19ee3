/**
 * The headers of one attempt: the endpoint's custom headers, then what Anvil sets (signature, body type, user
 * agent), which no custom header may name (src/endpoints/endpoint-headers.ts). Also the copy the delivery log
 * keeps, each custom value `[redacted]` whatever its name, since it may be a credential.
 */
import { signatureHeaders } from '../send/sign-outbound.js'
import { REDACTED } from '../send/attempt-headers.js'
import type { EndpointState, OutboundJobData } from './delivery-job.js'

const CONTENT_TYPE = 'application/json'
const USER_AGENT = 'anvil-webhooks'

export interface AttemptHeaders {
  /** What is sent. */
  sent: Record<string, string>
  /** What the log may keep: the same, custom values redacted. */
  logged: Record<string, string>
}

export function attemptHeaders (data: OutboundJobData, state: EndpointState, timestamp: number): AttemptHeaders {
  const own = signatureHeaders({ scheme: data.scheme, id: data.messageId, type: data.eventType, timestamp, body: data.body, secrets: state.secrets })
  own['content-type'] = CONTENT_TYPE
  own['user-agent'] = USER_AGENT
  const custom = state.headers ?? {}
  const sent: Record<string, string> = { ...custom, ...own }
  const logged: Record<string, string> = { ...own }
  for (const name of Object.keys(custom)) if (!(name in own)) logged[name] = REDACTED
  return { sent, logged }
}
