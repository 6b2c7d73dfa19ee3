/** The shapes of an endpoint: what a caller gives (create, patch) and what Anvil answers. */
import { Type, type Static } from '@sinclair/typebox'
import { Whole } from '../shared/schemas.js'
import { MAX_ENDPOINT_URL_LENGTH } from './endpoint-url.js'
import { apiShape } from '../shared/api-shape.js'
import { EndpointRowSchema } from '../sql/endpoints.js'

/** Event type names: `invoice.paid`, `user/created`, `order:shipped`; printable, no spaces. */
export const EVENT_TYPE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$'
export const MAX_RATE_LIMIT = 100_000

export const EventType = () => Type.String({ pattern: EVENT_TYPE_PATTERN, errorMessage: 'must be an event type name: letters, digits and _ . : / -, at most 128' })
export const Tenant = () => Type.String({ minLength: 1, maxLength: 200 })
export const Scheme = () => EndpointRowSchema.properties.scheme

const fields = {
  url: Type.String({ minLength: 1, maxLength: MAX_ENDPOINT_URL_LENGTH }),
  /** The tenant whose messages this endpoint receives. @defaultValue none (messages published without a tenant) */
  tenant: Type.Optional(Tenant()),
  /** The public event types it receives. @defaultValue `[]` (every type) */
  eventTypes: Type.Optional(Type.Array(EventType(), { maxItems: 256 })),
  /** @defaultValue `''` */
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  /** @defaultValue true */
  enabled: Type.Optional(Type.Boolean()),
  /** How deliveries are signed. @defaultValue `'standard-webhooks'` */
  scheme: Type.Optional(Scheme()),
  /** Deliveries per second, across processes. @defaultValue none (no limit) */
  rateLimit: Type.Optional(Whole(1, MAX_RATE_LIMIT))
}

export const EndpointInputSchema = Type.Object(fields, { additionalProperties: false })
export type EndpointInput = Static<typeof EndpointInputSchema>

/** Every field optional; `rateLimit: null` removes the limit, `tenant: null` the tenant. */
export const EndpointPatchSchema = Type.Object({
  url: Type.Optional(fields.url),
  tenant: Type.Optional(Type.Union([Tenant(), Type.Null()])),
  eventTypes: fields.eventTypes,
  description: fields.description,
  enabled: fields.enabled,
  scheme: fields.scheme,
  rateLimit: Type.Optional(Type.Union([Whole(1, MAX_RATE_LIMIT), Type.Null()]))
}, { additionalProperties: false, minProperties: 1 })
export type EndpointPatch = Static<typeof EndpointPatchSchema>

/** An endpoint as Anvil answers it: its row, key for key, but for what the operational events keep to themselves. */
export const EndpointShape = apiShape(Type.Omit(EndpointRowSchema, ['operational', 'circuit_opened_at']))
export const EndpointSchema = EndpointShape.schema
export type Endpoint = Static<typeof EndpointSchema>

/** An endpoint as created or rotated: the only answers that show a secret in full. */
export const EndpointWithSecretSchema = Type.Composite([EndpointSchema, Type.Object({ secret: Type.String() })])
export type EndpointWithSecret = Static<typeof EndpointWithSecretSchema>
