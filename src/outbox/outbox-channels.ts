/**
 * What the outbox does, on `node:diagnostics_channel` (as src/shared/diagnostics.ts does for the inbound
 * side): the metrics plugin subscribes. Names are stable API.
 */
import { channel, type Channel } from 'node:diagnostics_channel'

export interface PublishedMessage {
  /** The public event type (an event the map gives no public name is never delivered, nor counted). */
  eventType: string
  tenant: string | null
}

export interface DispatchedMessage {
  eventType: string
  /** Jobs made: one per subscribed, enabled endpoint. */
  jobs: number
}

export const outboxChannels = {
  /** A new message written to the outbox (in the caller's transaction, when one was given: a rollback still counted it). */
  published: channel('anvil:outbound:published') as Channel<PublishedMessage>,
  dispatched: channel('anvil:outbound:dispatched') as Channel<DispatchedMessage>
} as const
