import type { onRequestAsyncHookHandler } from 'fastify'
import { errors } from '../../src/shared/errors.js'
import { tokenMatcher } from '../../src/signing/crypto.js'
import { CSRF_HEADER, SAFE_METHODS, type SessionKeys } from './session.js'

/**
 * Lets a request through with `Authorization: Bearer <token>`, or with the console's session cookie, which
 * also needs the CSRF header to change anything. Routes marked `config: { anvilPublic: true }` (the login,
 * the console's static files) are open; an unknown path is not, so it cannot be told apart without the token.
 */
export function adminGuard (token: string, sessions: SessionKeys): onRequestAsyncHookHandler {
  const matches = tokenMatcher([token])
  return async (request) => {
    if ((request.routeOptions.config as { anvilPublic?: boolean }).anvilPublic === true) return
    const header = request.headers.authorization
    if (header !== undefined) {
      if (typeof header === 'string' && header.startsWith('Bearer ') && matches(header.slice(7))) return
      throw new errors.UNAUTHORIZED()
    }
    // The CSRF token is checked before the store is asked: a forged request costs no store round trip.
    const cookie = sessions.parse(request)
    if (cookie === undefined) throw new errors.UNAUTHORIZED()
    if (!SAFE_METHODS.has(request.method) && !sessions.csrfMatches(cookie, request.headers[CSRF_HEADER])) throw new errors.CSRF()
    if (await sessions.read(request) === undefined) throw new errors.UNAUTHORIZED()
  }
}
