/** The endpoints' statements, one each, and their row. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../shared/schemas.js'
import { qualify } from '../db/qualify.js'
import { sinceMessage } from './deliveries.js'
import { StoredTlsSchema } from '../receiver-auth/client-tls.js'
import { StoredOAuthSchema } from '../receiver-auth/oauth-client.js'

/** A row of `endpoints` as pg reads it. */
export const EndpointRowSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  tenant: Nullable(Type.String()),
  event_types: Type.Array(Type.String()),
  description: Type.String(),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String()),
  scheme: Type.Union([Type.Literal('standard-webhooks'), Type.Literal('stripe')]),
  rate_limit: Nullable(Type.Integer()),
  created_at: Type.Date(),
  updated_at: Type.Date(),
  last_delivery_at: Nullable(Type.Date()),
  last_delivery_status: Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Null()]),
  failing_since: Nullable(Type.Date()),
  /** Receives operational events only (migration 0011). */
  operational: Type.Boolean(),
  /** When its open circuit was reported (`endpoint.failing`); its next success clears it. */
  circuit_opened_at: Nullable(Type.Date()),
  /** Custom headers sent with each delivery, `{ name: value }` (migration 0017); only their names are answered. */
  headers: Type.Record(Type.String(), Type.String()),
  /** `hmac` (`v1`) or `ed25519` (`v1a`, Standard Webhooks only; migration 0023). */
  signing: Type.Union([Type.Literal('hmac'), Type.Literal('ed25519')]),
  /** The current signing key's `whpk_` public key; null for HMAC. */
  public_key: Nullable(Type.String()),
  /** A CA, a client certificate and its sealed key (migration 0026); answered as a summary only. */
  tls: Nullable(StoredTlsSchema),
  /** OAuth 2.0 client credentials, the secret sealed (migration 0026); answered without the secret. */
  oauth: Nullable(StoredOAuthSchema)
})
export type EndpointRow = Static<typeof EndpointRowSchema>

/** The columns an operator may change; `update` sets the ones given. */
export type EditableColumn = 'url' | 'tenant' | 'event_types' | 'description' | 'scheme' | 'rate_limit' | 'enabled' | 'headers' | 'tls' | 'oauth'

/** `$1` id. */
export const byId = (schema: string): string => `SELECT * FROM ${qualify(schema, 'endpoints')} WHERE id = $1`

/** `$1`…`$14`: id, url, tenant, event types, description, enabled, scheme, rate limit, operational, headers (JSON), signing, public key, tls and oauth (JSON or null). */
export const insert = (schema: string): string =>
  `INSERT INTO ${qualify(schema, 'endpoints')} (id, url, tenant, event_types, description, enabled, scheme, rate_limit, operational, headers, signing, public_key, tls, oauth)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`

/**
 * `$1` a tenant's lock key: held until the transaction ends, so that creates racing on every replica count one
 * after another (the count is a statement of its own, whose snapshot then sees the inserts committed before).
 */
export const lockTenant = (): string => 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))'

/** `$1` tenant: its endpoints, the operator's ones too. */
export const countTenant = (schema: string): string =>
  `SELECT count(*)::integer AS count FROM ${qualify(schema, 'endpoints')} WHERE tenant = $1 AND NOT operational`

/** In id order, operational endpoints aside: `$1` tenant or null for all, `$2` after this id or null, `$3` limit. */
export const list = (schema: string): string =>
  `SELECT * FROM ${qualify(schema, 'endpoints')} WHERE NOT operational AND ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR id > $2)
   ORDER BY id LIMIT $3`

/** The operational endpoints in id order: `$1` after this id or null, `$2` limit. */
export const listOperational = (schema: string): string =>
  `SELECT * FROM ${qualify(schema, 'endpoints')} WHERE operational AND ($1::text IS NULL OR id > $1) ORDER BY id LIMIT $2`

/** `$1` id, if operational. */
export const removeOperational = (schema: string): string => `DELETE FROM ${qualify(schema, 'endpoints')} WHERE id = $1 AND operational`

/**
 * Sets `columns` to `$2`, `$3`… in their order, for endpoint `$1`. Enabling again clears the reason and the
 * auto-disable clock; disabling keeps a reason the worker gave.
 */
export const update = (schema: string, columns: readonly EditableColumn[]): string => {
  // Headers merge: a name given `null` goes, the ones not named stay.
  const sets = columns.map((column, i) => column === 'headers' ? `headers = jsonb_strip_nulls(headers || $${i + 2}::jsonb)` : `${column} = $${i + 2}`)
  if (columns.includes('enabled')) {
    const enabled = `$${columns.indexOf('enabled') + 2}::boolean`
    sets.push(`disabled_reason = CASE WHEN ${enabled} THEN NULL ELSE coalesce(disabled_reason, 'disabled by an operator') END`,
      `failing_since = CASE WHEN ${enabled} THEN NULL ELSE failing_since END`)
  }
  return `UPDATE ${qualify(schema, 'endpoints')} SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING *`
}

/** `$1` id. */
export const remove = (schema: string): string => `DELETE FROM ${qualify(schema, 'endpoints')} WHERE id = $1`

/** `$1` id; `$2` the current public key after a rotation (null for HMAC). */
export const touch = (schema: string): string => `UPDATE ${qualify(schema, 'endpoints')} SET updated_at = now(), public_key = $2 WHERE id = $1`

/** What the delivery worker needs of endpoint `$1`: enabled, scheme, rate limit, custom headers, how it authenticates, and its live secrets, newest first. */
export const deliveryState = (schema: string): string =>
  `SELECT e.enabled, e.scheme, e.rate_limit, e.headers, e.tls, e.oauth,
     (SELECT array_agg(s.secret ORDER BY s.created_at DESC) FROM ${qualify(schema, 'endpoint_secrets')} s
      WHERE s.endpoint_id = e.id AND (s.expires_at IS NULL OR s.expires_at > now())) AS secrets
   FROM ${qualify(schema, 'endpoints')} e WHERE e.id = $1`

/**
 * An attempt's outcome on endpoint `$1` (`$2` 'success' or 'failed'), its row locked first: of two successes at
 * once, only the first sees the run of failures it ends (`was_failing_since`). With `$3` (an attempt that may be
 * reported: not an operational delivery), `$4` true when its circuit opened: the first such failure of an
 * enabled endpoint sets `circuit_opened_at` and a success clears it, each seen once (`was_circuit_opened_at`).
 */
export const recordDelivery = (schema: string): string => {
  const endpoints = qualify(schema, 'endpoints')
  return `UPDATE ${endpoints} e SET last_delivery_at = now(), last_delivery_status = $2,
     failing_since = CASE WHEN $2 = 'success' THEN NULL ELSE coalesce(old.failing_since, now()) END,
     circuit_opened_at = CASE WHEN NOT $3 THEN old.circuit_opened_at WHEN $2 = 'success' THEN NULL
       WHEN $4 AND old.enabled THEN coalesce(old.circuit_opened_at, now()) ELSE old.circuit_opened_at END
   FROM (SELECT id, failing_since, circuit_opened_at, enabled FROM ${endpoints} WHERE id = $1 FOR UPDATE) old
   WHERE e.id = old.id RETURNING e.failing_since, old.failing_since AS was_failing_since, e.circuit_opened_at,
     old.circuit_opened_at AS was_circuit_opened_at, e.tenant, e.url, e.description`
}

/** What `recordDelivery` returns. */
export const EndpointOutcomeSchema = Type.Object({
  failing_since: Nullable(Type.Date()),
  was_failing_since: Nullable(Type.Date()),
  circuit_opened_at: Nullable(Type.Date()),
  was_circuit_opened_at: Nullable(Type.Date()),
  tenant: Nullable(Type.String()),
  url: Type.String(),
  description: Type.String()
})
export type EndpointOutcome = Static<typeof EndpointOutcomeSchema>

/** Disables endpoint `$1` with reason `$2` if it is enabled; what its event names of it, and when, when this call disabled it. */
export const disable = (schema: string): string =>
  `UPDATE ${qualify(schema, 'endpoints')} SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1 AND enabled
   RETURNING tenant, url, description, updated_at`

/** The enabled endpoints of tenant `$1` subscribed to public type `$2`, for fan-out (operational ones take only operational events). */
export const subscribed = (schema: string): string =>
  `SELECT id, url, scheme FROM ${qualify(schema, 'endpoints')} WHERE enabled AND NOT operational AND tenant IS NOT DISTINCT FROM $1
   AND (cardinality(event_types) = 0 OR $2 = ANY (event_types)) ORDER BY id`

/**
 * Who receives an operational event of type `type` about tenant `tenant` (SQL expressions): the enabled
 * operational endpoints taking the type, and, when `tenantMay` (an `endpoint.*` type), the tenant's own endpoints
 * that name it in their event types (an empty list, every type, does not take operational events).
 */
export const operationalReceivers = (tenant: string, type: string, tenantMay: string): string =>
  `e.enabled AND ((e.operational AND (cardinality(e.event_types) = 0 OR ${type} = ANY (e.event_types)))
     OR (NOT e.operational AND ${tenantMay} AND ${tenant}::text IS NOT NULL AND e.tenant = ${tenant} AND ${type} = ANY (e.event_types)))`

/** The endpoints an operational message goes to: `$1` tenant, `$2` type, `$3` whether tenants may take it. */
export const subscribedOperational = (schema: string): string =>
  `SELECT e.id, e.url, e.scheme, e.operational FROM ${qualify(schema, 'endpoints')} e WHERE ${operationalReceivers('$1', '$2', '$3')} ORDER BY e.id`

/** The endpoints of ids `$1`, for a fan-out to chosen ones. */
export const byIds = (schema: string): string =>
  `SELECT id, url, scheme, operational FROM ${qualify(schema, 'endpoints')} WHERE id = ANY ($1) ORDER BY id`

/**
 * Where a re-send of message `$1` (tenant `$2`, public type `$3`) may go: the endpoints subscribed now and,
 * once it was dispatched (`$4`, or null), there then; each with whether it already had a success of it.
 */
export const resendTargets = (schema: string): string =>
  `SELECT e.id, EXISTS (SELECT 1 FROM ${qualify(schema, 'deliveries')} d WHERE d.message_id = $1 AND d.endpoint_id = e.id AND d.status = 'success'
       AND ${sinceMessage(schema, '$1', 'd.')}) AS delivered
   FROM ${qualify(schema, 'endpoints')} e WHERE e.enabled AND NOT e.operational AND e.tenant IS NOT DISTINCT FROM $2 AND (cardinality(e.event_types) = 0 OR $3 = ANY (e.event_types))
     AND ($4::timestamptz IS NULL OR e.created_at <= $4) ORDER BY e.id`
