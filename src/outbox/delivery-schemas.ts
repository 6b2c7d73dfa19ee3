/** The shapes of the delivery log and the outbox as Anvil answers them. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../shared/schemas.js'

const Time = () => Type.String({ format: 'date-time' })

/** `started`: written before the POST and not completed yet, or its worker died mid-POST (the outcome is unknown). */
export const DeliveryStatus = () => Type.Union([Type.Literal('started'), Type.Literal('success'), Type.Literal('failed')])

export const DeliverySchema = Type.Object({
  id: Type.String(),
  messageId: Type.String(),
  endpointId: Type.String(),
  attempt: Type.Integer(),
  status: DeliveryStatus(),
  httpStatus: Nullable(Type.Integer()),
  durationMs: Type.Integer(),
  error: Type.Optional(Type.String()),
  errorClass: Type.Optional(Type.String()),
  responseHead: Type.Optional(Type.String()),
  payloadSha256: Type.String(),
  createdAt: Time()
})
export type Delivery = Static<typeof DeliverySchema>

export const MessageSchema = Type.Object({
  id: Type.String(),
  type: Type.String(),
  /** The name receivers see; null when the event map gives none (never delivered). */
  publicType: Nullable(Type.String()),
  tenant: Nullable(Type.String()),
  data: Type.Unknown(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('dispatched'), Type.Literal('failed')]),
  /** The dispatcher's tries at turning the message into delivery jobs; each delivery's own tries are its `attempt`. */
  dispatchAttempts: Type.Integer(),
  lastDispatchError: Nullable(Type.String()),
  createdAt: Time(),
  dispatchedAt: Nullable(Time())
})
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
