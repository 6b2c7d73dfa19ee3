import type { FastifyRequest } from 'fastify'
import type { PortalClaims, PortalScopeName } from '../../src/portal/portal-token.js'
import type { CountedLimit, PortalQuotas } from '../../src/portal/portal-limits.js'

/**
 * What a portal token may do on an admin route: a route opts in with `config: { anvilPortal: 'read' }` (or
 * `'write'`, for one that changes something) and keeps the token's tenant to its own records
 * (`portalTenant`); a route that does not opt in answers a portal token 403.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** Open to a portal token with this scope. @defaultValue none: 403 for a portal token */
    anvilPortal?: PortalScopeName
    /** Open to anyone (the console's files, its login). @defaultValue false */
    anvilPublic?: boolean
  }
  interface FastifyRequest {
    /** The portal token's claims when the request carries one, else null (the admin token, a console session). */
    anvilPortal: PortalClaims | null
    /** The limits a portal token's request is held to; null for an operator's. */
    anvilQuotas: PortalQuotas | null
  }
}

/** Counts a portal token's request against its tenant's `limit` (429 past it); an operator's is not counted. */
export async function countForTenant (request: FastifyRequest, limit: CountedLimit): Promise<void> {
  if (request.anvilPortal !== null) await request.anvilQuotas?.take(limit, request.anvilPortal.tenant)
}

/** The tenant a portal token limits this request to; undefined for an operator. */
export const portalTenant = (request: FastifyRequest): string | undefined => request.anvilPortal?.tenant

export const PORTAL_READ = { anvilPortal: 'read' } as const
export const PORTAL_WRITE = { anvilPortal: 'write' } as const
