/** The `portal_revocations` table (migration 0010): its row, and one statement per plan. */
import { Type, type Static } from '@sinclair/typebox'
import { qualify } from './qualify.js'

export const PortalRevocationRowSchema = Type.Object({
  tenant: Type.String(),
  revoked_before: Type.Unsafe<Date>({})
})
export type PortalRevocationRow = Static<typeof PortalRevocationRowSchema>

/** `$1` tenant, `$2` time: tokens issued at or before it are refused; a later revocation never moves it back. */
export const revoke = (schema: string): string => `INSERT INTO ${qualify(schema, 'portal_revocations')} (tenant, revoked_before)
  VALUES ($1, $2) ON CONFLICT (tenant) DO UPDATE
  SET revoked_before = greatest(${qualify(schema, 'portal_revocations')}.revoked_before, EXCLUDED.revoked_before)
  RETURNING *`

/** `$1` tenant. */
export const get = (schema: string): string => `SELECT * FROM ${qualify(schema, 'portal_revocations')} WHERE tenant = $1`
