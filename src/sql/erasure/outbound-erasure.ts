/**
 * Erasure on the outgoing side (migration 0025): a subject's or a tenant's messages taken a batch at a time, the
 * places their jobs may be, the delivery log's bodies of an erased message, a removed tenant's endpoints and portal
 * link codes. One statement per export; each batch is its own short transaction (src/erasure/).
 */
import { qualify } from '../../db/qualify.js'

/** Up to `$2` messages of subject `$1`, locked until the batch's transaction ends (outbox_subject). */
export const subjectBatch = (schema: string): string =>
  `SELECT id, status FROM ${qualify(schema, 'outbox')} WHERE subject = $1 ORDER BY id LIMIT $2 FOR UPDATE`

/** Up to `$2` messages of tenant `$1`, locked until the batch's transaction ends (outbox_tenant). */
export const tenantBatch = (schema: string): string =>
  `SELECT id, status FROM ${qualify(schema, 'outbox')} WHERE tenant = $1 ORDER BY id LIMIT $2 FOR UPDATE`

/**
 * Each (message, endpoint) pair of messages `$1` (text[]) a delivery job may exist for: the endpoints of the
 * message's tenant (enabled or not), and any its delivery log names.
 */
export const jobPairs = (schema: string): string =>
  `SELECT o.id AS message_id, e.id AS endpoint_id FROM ${qualify(schema, 'outbox')} o
     JOIN ${qualify(schema, 'endpoints')} e ON e.tenant IS NOT DISTINCT FROM o.tenant WHERE o.id = ANY ($1::text[])
   UNION SELECT message_id, endpoint_id FROM ${qualify(schema, 'deliveries')} WHERE message_id = ANY ($1::text[])`

/** The keyed deliveries of messages `$1` (text[]) still waiting or queued, in their keys' order. */
export const orderedOf = (schema: string): string =>
  `SELECT message_id, endpoint_id, ordering_key FROM ${qualify(schema, 'ordered_deliveries')} WHERE message_id = ANY ($1::text[]) ORDER BY seq`

/** The bodies of messages `$1`'s (text[]) attempts erased, each row marked; rows already erased are left. */
export const eraseAttempts = (schema: string): string =>
  `UPDATE ${qualify(schema, 'deliveries')} SET response_head = NULL, error = NULL, request_headers = NULL, response_headers = NULL, erased_at = now()
   WHERE message_id = ANY ($1::text[]) AND erased_at IS NULL`

/** Messages `$1` (text[]) deleted; each one's status back. */
export const deleteMessages = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'outbox')} WHERE id = ANY ($1::text[]) RETURNING status`

/** The attempts of messages `$1` (text[]) deleted (a removed tenant's, wherever they went). */
export const deleteAttemptsOf = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'deliveries')} WHERE message_id = ANY ($1::text[])`

/** Up to `$2` attempts at endpoints `$1` (text[]) deleted (deliveries_endpoint). */
export const deleteAttemptsAt = (schema: string): string => {
  const deliveries = qualify(schema, 'deliveries')
  return `DELETE FROM ${deliveries} WHERE id = ANY (ARRAY(SELECT id FROM ${deliveries} WHERE endpoint_id = ANY ($1::text[]) LIMIT $2))`
}

/** Tenant `$1`'s endpoints. */
export const endpointsOf = (schema: string): string => `SELECT id FROM ${qualify(schema, 'endpoints')} WHERE tenant = $1`

/** Endpoints `$1` (text[]) deleted, with their secrets and keyed deliveries (ON DELETE CASCADE). */
export const deleteEndpoints = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'endpoints')} WHERE id = ANY ($1::text[])`

/** Tenant `$1`'s portal link codes, used or not, deleted: a link not yet opened opens nothing. */
export const deleteLinkCodes = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'portal_link_codes')} WHERE claims ->> 'tenant' = $1`
