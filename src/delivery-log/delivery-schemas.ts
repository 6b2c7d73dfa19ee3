/** The shapes of the delivery log and the outbox as Anvil answers them. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../shared/schemas.js'
import { apiShape } from '../shared/api-shape.js'
import { DeliveryRowSchema, type DeliveryRow } from '../sql/deliveries.js'
import { OutboxRowSchema } from '../sql/outbox.js'

const Time = () => Type.String({ format: 'date-time' })

/** `started`: written before the POST and not completed yet, or its worker died mid-POST (the outcome is unknown). */
export const DeliveryStatus = () => DeliveryRowSchema.properties.status

/**
 * What made an attempt: the delivery's own schedule (`schedule`), or a send by hand: `retry` (one delivery
 * retried), `recover` (an endpoint's failures since a time), `resend` (a failed message sent again).
 */
export const DeliveryTrigger = () => Type.Union([Type.Literal('schedule'), Type.Literal('retry'), Type.Literal('recover'), Type.Literal('resend')])
export type DeliveryTriggerName = Static<ReturnType<typeof DeliveryTrigger>>

/** A hand send's job id ends with its kind (src/outbox/resend.ts, message-resend.ts). */
const HAND_JOB = /\.(retry|recover)-[0-9a-f]+$|\.(resend)$/
export function triggerOf (jobId: string | null): DeliveryTriggerName {
  const match = jobId === null ? null : HAND_JOB.exec(jobId)
  return (match?.[1] ?? match?.[2] ?? 'schedule') as DeliveryTriggerName
}

const Derived = Type.Object({
  /** In a list: the event's type and the endpoint's URL, so a row says what went where (null once either is gone). */
  eventType: Type.Optional(Nullable(Type.String())),
  endpointUrl: Type.Optional(Nullable(Type.String())),
  trigger: DeliveryTrigger(),
  /** A failed or started attempt whose message reached the same endpoint afterwards: a retry would deliver it twice. */
  deliveredLater: Type.Boolean()
})

/** An attempt as Anvil answers it in a list: its row but for the worker's bookkeeping and the headers, with no empty error fields. */
export const DeliveryShape = apiShape(Type.Omit(DeliveryRowSchema, ['job_id', 'resolved', 'job_stalls', 'request_headers', 'response_headers',
  'message_created_at', 'message_tenant', 'message_type']),
  { absentWhenNull: ['error', 'error_class', 'response_head', 'erased_at'] })
export const DeliverySchema = Type.Composite([DeliveryShape.schema, Derived])
export type Delivery = Static<typeof DeliverySchema>

/** An attempt with what it sent and got back besides the bodies (a message's page). */
const DetailShape = apiShape(Type.Pick(DeliveryRowSchema, ['request_headers', 'response_headers']), { absentWhenNull: ['request_headers', 'response_headers'] })
export const DeliveryDetailSchema = Type.Composite([DeliverySchema, DetailShape.schema])
export type DeliveryDetail = Static<typeof DeliveryDetailSchema>

/** A list's row: the attempt, with what `list` reads beside it. */
export type DeliveryListRow = DeliveryRow & { event_type?: string | null, endpoint_url?: string | null }
export const toDelivery = (row: DeliveryListRow): Delivery => ({
  ...DeliveryShape.from(row),
  ...(row.event_type === undefined ? {} : { eventType: row.event_type }),
  ...(row.endpoint_url === undefined ? {} : { endpointUrl: row.endpoint_url }),
  trigger: triggerOf(row.job_id),
  deliveredLater: row.resolved
})
export const toDeliveryDetail = (row: DeliveryRow): DeliveryDetail => ({ ...toDelivery(row), ...DetailShape.from(row) })

/**
 * A message as Anvil answers it: its row but for the lease, the retry clock, the operational flag and the data
 * as JSON text. `publicType` is null when the event map gives none (never delivered); `dispatchAttempts` counts
 * the dispatcher's tries at turning the message into delivery jobs (each delivery's own tries are its `attempt`).
 * `orderingKey` only when it was published with one; its place in the key's order is the dispatcher's. `traceparent`
 * and `tracestate` only when it was published in a trace.
 */
export const MessageShape = apiShape(Type.Omit(OutboxRowSchema, ['data', 'next_attempt_at', 'lease_owner', 'lease_until', 'operational', 'ordering_seq']),
  { rename: { attempts: 'dispatchAttempts', last_error: 'lastDispatchError' }, absentWhenNull: ['ordering_key', 'traceparent', 'tracestate', 'subject'] })
export const MessageSchema = Type.Composite([MessageShape.schema, Type.Object({ data: Type.Unknown() })])
export type Message = Static<typeof MessageSchema>

export const MessageWithDeliveriesSchema = Type.Composite([MessageSchema, Type.Object({ deliveries: Type.Array(DeliveryDetailSchema) })])
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
