/**
 * `anvil portal token` and `anvil portal revoke`: a tenant's portal tokens, minted and revoked through the admin
 * API (--url, ANVIL_ADMIN_TOKEN), which knows the portal's public URL and keeps the revocations.
 */
import type { JournalCliConfig } from './config/load-database-config.js'
import { adminCall } from './admin-client.js'
import { errors } from '../src/shared/errors.js'
import { DURATION_RULE, parseDuration } from '../src/time/duration.js'

export interface PortalTokenFlags { tenant: string, ttl?: string, readOnly?: boolean }

function adminOf (config: JournalCliConfig): { url: string, token: string } {
  if (config.admin === undefined) throw new errors.INVALID_CONFIG('--url (ANVIL_ADMIN_URL) and ANVIL_ADMIN_TOKEN are required: portal tokens are minted by the admin API')
  return config.admin
}

/** Prints `{ token, url, expiresAt }` as one JSON line: the url is the link to give the tenant. */
export async function portalToken (config: JournalCliConfig, flags: PortalTokenFlags): Promise<void> {
  const ms = flags.ttl === undefined ? undefined : parseDuration(flags.ttl)
  if (ms === undefined && flags.ttl !== undefined) throw new errors.INVALID_CONFIG(`--ttl must be ${DURATION_RULE}, at most 7d`)
  const body = {
    tenant: flags.tenant,
    ...(ms === undefined ? {} : { ttlSeconds: ms / 1000 }),
    ...(flags.readOnly === true ? { scopes: ['read'] } : {})
  }
  const minted = await adminCall(adminOf(config))('POST', '/portal/tokens', body)
  process.stdout.write(JSON.stringify(minted) + '\n')
}

/** Revokes every portal token of the tenant issued until now; prints `{ tenant, revokedBefore }`. */
export async function portalRevoke (config: JournalCliConfig, tenant: string): Promise<void> {
  const revoked = await adminCall(adminOf(config))('POST', `/portal/tenants/${encodeURIComponent(tenant)}/revoke`)
  process.stdout.write(JSON.stringify(revoked) + '\n')
}
