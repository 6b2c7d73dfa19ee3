/** The tenant portal's tables: `portal_revocations` (migration 0010) and `portal_counters` (0015), one statement per plan. */
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
