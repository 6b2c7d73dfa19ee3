/**
 * What the delivery worker does, on `node:diagnostics_channel` (as src/shared/diagnostics.ts does for the
 * inbound side): the metrics plugin subscribes, and so can anything else. Names are stable API.
 */
import { channel, type Channel } from 'node:diagnostics_channel'

export interface DeliveredMessage {
  endpointId: string
  eventType: string
  /** `success`, or the attempt's error class (`timeout`, `http_5xx`, …). */
  outcome: string
  durationMs: number
}
export interface EndpointDisabledMessage { endpointId: string, reason: string }
export interface CircuitMessage { endpointId: string, open: boolean }

export const outboundChannels = {
  delivered: channel('anvil:outbound:delivered') as Channel<DeliveredMessage>,
  endpointDisabled: channel('anvil:outbound:endpoint-disabled') as Channel<EndpointDisabledMessage>,
  circuit: channel('anvil:outbound:circuit') as Channel<CircuitMessage>
} as const

type Messages = { [N in keyof typeof outboundChannels]: (typeof outboundChannels)[N] extends Channel<infer M> ? M : never }

/** Publishes only when someone listens. */
export function publishOutbound<N extends keyof typeof outboundChannels> (name: N, message: () => Messages[N]): void {
  const target = outboundChannels[name] as Channel<Messages[N]>
  if (target.hasSubscribers) target.publish(message())
}
