/**
 * The tenant portal's tables: `portal_revocations` (migration 0010), `portal_counters` (0015) and `portal_link_codes`
 * (0019), one statement per plan.
 */
import { Type, type Static } from '@sinclair/typebox'
import { qualify } from '../db/qualify.js'

export const PortalRevocationRowSchema = Type.Object({
  tenant: Type.String(),
  revoked_before: Type.Unsafe<Date>({})
})
export type PortalRevocationRow = Static<typeof PortalRevocationRowSchema>

/** `$1` tenant, `$2` time: tokens issued at or before it are refused; a later revocation never moves it back. */
export const revokeTenant = (schema: string): string => `INSERT INTO ${qualify(schema, 'portal_revocations')} (tenant, revoked_before)
  VALUES ($1, $2) ON CONFLICT (tenant) DO UPDATE
  SET revoked_before = greatest(${qualify(schema, 'portal_revocations')}.revoked_before, EXCLUDED.revoked_before)
  RETURNING *`

/** `$1` tenant. */
export const revocationOf = (schema: string): string => `SELECT * FROM ${qualify(schema, 'portal_revocations')} WHERE tenant = $1`

/**
 * `$1` key: counts one request in the current minute (a new minute starts the count again) and answers the count
 * and the seconds left in the minute, from PostgreSQL's clock, which every replica shares.
 */
export const countRequest = (schema: string): string => {
  const table = qualify(schema, 'portal_counters')
  return `INSERT INTO ${table} AS c (key, window_start, count) VALUES ($1, date_trunc('minute', now()), 1)
  ON CONFLICT (key) DO UPDATE SET
    count = CASE WHEN c.window_start = EXCLUDED.window_start THEN c.count + 1 ELSE 1 END,
    window_start = EXCLUDED.window_start
  RETURNING count, ceil(extract(epoch FROM window_start + interval '1 minute' - now()))::integer AS seconds_left`
}

/** The counts of minutes long past (a token's row outlives the token otherwise). */
export const pruneCounts = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'portal_counters')} WHERE window_start < now() - interval '1 hour'`

/** A link's code: `$1` its SHA-256, `$2` the claims of the session it opens, `$3` when it expires. */
export const insertLinkCode = (schema: string): string =>
  `INSERT INTO ${qualify(schema, 'portal_link_codes')} (code_hash, claims, expires_at) VALUES ($1, $2, $3)`

/**
 * Spends the code `$1` (its SHA-256) if it is unused and unexpired, answering its claims; of two exchanges at once
 * the row's lock lets one through. No row: `linkCodeState` tells why.
 */
export const useLinkCode = (schema: string): string =>
  `UPDATE ${qualify(schema, 'portal_link_codes')} SET used_at = now()
   WHERE code_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING claims`

/** `$1` the code's SHA-256: whether it was used. */
export const linkCodeState = (schema: string): string =>
  `SELECT used_at IS NOT NULL AS used FROM ${qualify(schema, 'portal_link_codes')} WHERE code_hash = $1`

/** Codes a day past their expiry, at most `$1` of them (portal_link_codes_expires). */
export const pruneLinkCodes = (schema: string): string => {
  const table = qualify(schema, 'portal_link_codes')
  return `DELETE FROM ${table} WHERE code_hash = ANY (ARRAY(
    SELECT code_hash FROM ${table} WHERE expires_at < now() - interval '1 day' ORDER BY expires_at LIMIT $1))`
}
