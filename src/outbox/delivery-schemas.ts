/** The shapes of the delivery log and the outbox as Anvil answers them. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../shared/schemas.js'
import { apiShape } from '../shared/api-shape.js'
import { DeliveryRowSchema } from '../sql/deliveries.js'
import { OutboxRowSchema } from '../sql/outbox.js'

const Time = () => Type.String({ format: 'date-time' })

/** `started`: written before the POST and not completed yet, or its worker died mid-POST (the outcome is unknown). */
export const DeliveryStatus = () => DeliveryRowSchema.properties.status

/** An attempt as Anvil answers it: its row but for the worker's bookkeeping, with no empty error fields. */
export const DeliveryShape = apiShape(Type.Omit(DeliveryRowSchema, ['job_id', 'resolved', 'job_stalls']), { absentWhenNull: ['error', 'error_class', 'response_head'] })
export const DeliverySchema = DeliveryShape.schema
export type Delivery = Static<typeof DeliverySchema>

/**
 * A message as Anvil answers it: its row but for the lease, the retry clock, the operational flag and the data
 * as JSON text. `publicType` is null when the event map gives none (never delivered); `dispatchAttempts` counts
 * the dispatcher's tries at turning the message into delivery jobs (each delivery's own tries are its `attempt`).
 */
export const MessageShape = apiShape(Type.Omit(OutboxRowSchema, ['data', 'next_attempt_at', 'lease_owner', 'lease_until', 'operational']),
  { rename: { attempts: 'dispatchAttempts', last_error: 'lastDispatchError' } })
export const MessageSchema = Type.Composite([MessageShape.schema, Type.Object({ data: Type.Unknown() })])
export type Message = Static<typeof MessageSchema>

export const MessageWithDeliveriesSchema = Type.Composite([MessageSchema, Type.Object({ deliveries: Type.Array(DeliverySchema) })])
export type MessageWithDeliveries = Static<typeof MessageWithDeliveriesSchema>

/** A message and an endpoint that has not had a success for it yet. */
export const UndeliveredSchema = Type.Object({
  messageId: Type.String(),
  endpointId: Type.String(),
  type: Nullable(Type.String()),
  attempts: Type.Integer(),
  lastAttemptAt: Time(),
  lastHttpStatus: Nullable(Type.Integer()),
  lastError: Nullable(Type.String())
})
export type Undelivered = Static<typeof UndeliveredSchema>
