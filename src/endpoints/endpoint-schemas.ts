/** The shapes of an endpoint: what a caller gives (create, patch) and what Anvil answers. */
import { Type, type Static } from '@sinclair/typebox'
import { Whole } from '../shared/schemas.js'
import { MAX_ENDPOINT_URL_LENGTH } from './endpoint-url.js'
import { apiShape } from '../shared/api-shape.js'
import { EndpointRowSchema, type EndpointRow } from '../sql/endpoints.js'
import { CustomHeaders } from './endpoint-headers.js'
import { TlsInputSchema, TlsSummarySchema, tlsSummary } from '../receiver-auth/client-tls.js'
import { OAuthInputSchema, OAuthSummarySchema, oauthSummary } from '../receiver-auth/oauth-client.js'

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
  rateLimit: Type.Optional(Whole(1, MAX_RATE_LIMIT)),
  /** Standard Webhooks signatures: HMAC-SHA256 `v1` with a `whsec_` secret, or Ed25519 `v1a` with a `whsk_` key kept by Anvil, whose `whpk_` public key is answered. @defaultValue `'hmac'` */
  signing: Type.Optional(EndpointRowSchema.properties.signing),
  /** Headers sent with each delivery (`authorization`, `x-api-key`); values kept like secrets. @defaultValue none */
  headers: Type.Optional(CustomHeaders(false)),
  /** Mutual TLS: the CA the receiver's certificate must chain to, and the client certificate presented, its key stored encrypted. @defaultValue none */
  tls: Type.Optional(TlsInputSchema),
  /** OAuth 2.0 client credentials: each delivery carries a bearer token fetched with them, the secret stored encrypted. @defaultValue none */
  oauth: Type.Optional(OAuthInputSchema)
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
  rateLimit: Type.Optional(Type.Union([Whole(1, MAX_RATE_LIMIT), Type.Null()])),
  /** Sets the headers named, removes those given `null`, keeps the others. */
  headers: Type.Optional(CustomHeaders(true)),
  /** Replaces the endpoint's `tls` (given whole, key included); null removes it. */
  tls: Type.Optional(Type.Union([TlsInputSchema, Type.Null()])),
  /** Replaces the endpoint's `oauth` (given whole, secret included); null removes it. */
  oauth: Type.Optional(Type.Union([OAuthInputSchema, Type.Null()]))
}, { additionalProperties: false, minProperties: 1 })
export type EndpointPatch = Static<typeof EndpointPatchSchema>

const rowShape = apiShape(Type.Omit(EndpointRowSchema, ['operational', 'circuit_opened_at', 'headers', 'tls', 'oauth']))

/**
 * An endpoint as Anvil answers it: its row, key for key, but for what the operational events keep to themselves,
 * its custom headers' names without their values (`headerNames`), and its `tls` and `oauth` without their secrets.
 */
export const EndpointSchema = Type.Composite([rowShape.schema, Type.Object({
  headerNames: Type.Array(Type.String()),
  /** Null without mutual TLS; else whether a CA of its own is set, and the client certificate's fingerprint, subject and expiry. */
  tls: TlsSummarySchema,
  /** Null without OAuth; else the client credentials but for the secret. */
  oauth: OAuthSummarySchema
})])
export type Endpoint = Static<typeof EndpointSchema>
export const EndpointShape = {
  schema: EndpointSchema,
  from: (row: EndpointRow): Endpoint => ({
    ...rowShape.from(row), headerNames: Object.keys(row.headers).sort(), tls: tlsSummary(row.tls ?? null), oauth: oauthSummary(row.oauth ?? null)
  })
}

/** An endpoint as created or rotated: the only answers that show a secret in full; an Ed25519 endpoint's `secret` is its `whpk_` public key. */
export const EndpointWithSecretSchema = Type.Composite([EndpointSchema, Type.Object({ secret: Type.String() })])
export type EndpointWithSecret = Static<typeof EndpointWithSecretSchema>
