/** The endpoints' signing secrets: one statement each. */
import { qualify } from '../db/qualify.js'

/** `$1` endpoint, `$2` secret: a current one (no expiry). */
export const insert = (schema: string): string => `INSERT INTO ${qualify(schema, 'endpoint_secrets')} (endpoint_id, secret) VALUES ($1, $2)`

/** The expired secrets of endpoint `$1`. */
export const deleteExpired = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'endpoint_secrets')} WHERE endpoint_id = $1 AND expires_at <= now()`

/** The live secrets of endpoint `$1` expire within `$2` seconds (a rotation's grace), or sooner if they already would. */
export const expireLive = (schema: string): string =>
  `UPDATE ${qualify(schema, 'endpoint_secrets')} SET expires_at = now() + $2 * interval '1 second'
   WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now() + $2 * interval '1 second')`

/** Endpoint `$1`'s current secret (the newest without an expiry), for a reveal. */
export const current = (schema: string): string =>
  `SELECT secret FROM ${qualify(schema, 'endpoint_secrets')} WHERE endpoint_id = $1 AND expires_at IS NULL ORDER BY created_at DESC LIMIT 1`
