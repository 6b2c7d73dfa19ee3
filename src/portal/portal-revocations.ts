import type { Database } from '../db/database.js'
import * as sql from '../sql/portal.js'
import type { PortalRevocationRow } from '../sql/portal.js'
import type { PortalClaims } from './portal-token.js'

export type PortalRevocations = ReturnType<typeof createPortalRevocations>

/**
 * Revoking a tenant's portal tokens, in PostgreSQL so that every replica refuses them at once: one row per
 * tenant, read by its key for each request that carries a portal token (no cache, so nothing to wait out).
 */
export function createPortalRevocations (db: Database) {
  return {
    /** Every token of `tenant` issued at or before `at` is refused from now on; answers the time in force. */
    async revoke (tenant: string, at = new Date()): Promise<Date> {
      const { rows } = await db.pool.query<PortalRevocationRow>(sql.revokeTenant(db.schema), [tenant, at])
      return (rows[0] as PortalRevocationRow).revoked_before
    },

    async isRevoked (claims: PortalClaims): Promise<boolean> {
      const { rows } = await db.pool.query<PortalRevocationRow>(sql.revocationOf(db.schema), [claims.tenant])
      const row = rows[0]
      return row !== undefined && claims.iat <= row.revoked_before.getTime()
    }
  }
}
