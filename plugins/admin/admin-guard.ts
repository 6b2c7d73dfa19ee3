import type { onRequestAsyncHookHandler } from 'fastify'
import type { KeyObject } from 'node:crypto'
import type { PortalRevocations } from '../../src/portal/portal-revocations.js'
import { isPortalToken, verifyPortalToken } from '../../src/portal/portal-token.js'
import { tokenKey, type PortalQuotas } from '../../src/portal/portal-limits.js'
import { errors, WRONG_ADMIN_TOKEN, WRONG_PORTAL_LINK } from '../../src/shared/errors.js'
import { tokenMatcher } from '../../src/signing/crypto.js'
import './portal-access.js'
import { CSRF_HEADER, SAFE_METHODS, type SessionKeys } from './session.js'

/** How the guard checks portal tokens: their key, the tenants' revocations, and the limits a token is held to. */
export interface PortalGuard { key: KeyObject, revocations: PortalRevocations, quotas: PortalQuotas }

/**
 * Lets a request through with `Authorization: Bearer <token>`, or with the console's session cookie, which
 * also needs the CSRF header to change anything. Routes marked `config: { anvilPublic: true }` (the login,
 * the console's static files) are open; an unknown path is not, so it cannot be told apart without the token.
 * A portal token (`anvil_pt_…`) that is forged, expired or revoked is 401 everywhere; a valid one reaches only
 * the routes that opt in with its scope (`config: { anvilPortal }`), and every other route, public ones too, is 403;
 * each of its writes counts against its `writesPerMinute`.
 */
export function adminGuard (token: string, sessions: SessionKeys, portal?: PortalGuard): onRequestAsyncHookHandler {
  const matches = tokenMatcher([token])
  return async (request) => {
    const config = request.routeOptions.config
    const header = request.headers.authorization
    if (portal !== undefined && typeof header === 'string' && header.startsWith('Bearer ') && isPortalToken(header.slice(7))) {
      const claims = verifyPortalToken(portal.key, header.slice(7))
      if (claims === undefined || await portal.revocations.isRevoked(claims)) throw new errors.UNAUTHORIZED(WRONG_PORTAL_LINK)
      if (config.anvilPortal === undefined) throw new errors.FORBIDDEN(`a portal token cannot use ${request.method} ${request.routeOptions.url ?? 'this route'}`)
      if (!claims.scopes.includes(config.anvilPortal)) throw new errors.FORBIDDEN(`this portal token lacks the ${config.anvilPortal} scope`)
      request.anvilPortal = claims
      request.anvilQuotas = portal.quotas
      if (config.anvilPortal === 'write') await portal.quotas.take('writesPerMinute', tokenKey(header.slice(7)))
      return
    }
    if (config.anvilPublic === true) return
    if (header !== undefined) {
      if (typeof header === 'string' && header.startsWith('Bearer ') && matches(header.slice(7))) return
      throw new errors.UNAUTHORIZED(WRONG_ADMIN_TOKEN)
    }
    // The CSRF token is checked before the store is asked: a forged request costs no store round trip.
    const cookie = sessions.parse(request)
    if (cookie === undefined) throw new errors.UNAUTHORIZED(WRONG_ADMIN_TOKEN)
    if (!SAFE_METHODS.has(request.method) && !sessions.csrfMatches(cookie, request.headers[CSRF_HEADER])) throw new errors.CSRF()
    if (await sessions.read(request) === undefined) throw new errors.UNAUTHORIZED(WRONG_ADMIN_TOKEN)
  }
}
