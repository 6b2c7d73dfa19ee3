import { createHash, timingSafeEqual } from 'node:crypto'
import type { onRequestHookHandler } from 'fastify'
import { errors } from '../../src/shared/errors.js'
import { CSRF_HEADER, SAFE_METHODS, type SessionKeys } from './session.js'

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest()

/** True when `given` is the token. Both sides are hashed first, so the compare takes the same time whatever was sent. */
export function tokenMatcher (token: string): (given: string) => boolean {
  const expected = digest(token)
  return (given) => given !== '' && timingSafeEqual(digest(given), expected)
}

/**
 * Lets a request through with `Authorization: Bearer <token>`, or with the console's session cookie, which
 * also needs the CSRF header to change anything. Routes marked `config: { anvilPublic: true }` (the login,
 * the console's static files) are open; an unknown path is not, so it cannot be told apart without the token.
 */
export function adminGuard (token: string, sessions: SessionKeys): onRequestHookHandler {
  const matches = tokenMatcher(token)
  return (request, _reply, done) => {
    if ((request.routeOptions.config as { anvilPublic?: boolean }).anvilPublic === true) return done()
    const header = request.headers.authorization
    if (header !== undefined) {
      return done(typeof header === 'string' && header.startsWith('Bearer ') && matches(header.slice(7)) ? undefined : new errors.UNAUTHORIZED())
    }
    const session = sessions.read(request)
    if (session === undefined) return done(new errors.UNAUTHORIZED())
    if (!SAFE_METHODS.has(request.method) && !sessions.csrfMatches(session, request.headers[CSRF_HEADER])) return done(new errors.CSRF())
    done()
  }
}
