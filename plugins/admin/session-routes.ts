import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { errors, WRONG_ADMIN_TOKEN } from '../../src/shared/errors.js'
import { tokenMatcher } from '../../src/signing/crypto.js'
import type { SessionKeys } from './session.js'
import { SessionAnswerSchema, SessionStateSchema, type Features } from './session-state.js'
import { ROUTE_FAMILIES } from './route-families.js'
/** The window failed logins are counted in, from a client's first failure. */
export const LOGIN_WINDOW_MS = 60_000

const retryIn = (ms: number): string => {
  const seconds = Math.max(1, Math.ceil(ms / 1000))
  return seconds === 1 ? '1 second' : `${seconds} seconds`
}

/**
 * The console's login: `POST <prefix>/session { token }` sets the session cookie and answers the CSRF token;
 * `GET` answers it again for the open session (null for a Bearer caller); `GET <prefix>/session/state` says
 * whether there is one, 200 either way, so a logged-out page's probe is no failed request; `DELETE` ends it,
 * `DELETE <prefix>/sessions` ends every one. Only failed logins count against a client address (`request.ip`: behind
 * a proxy, Fastify's `trustProxy` makes it the client's), so a stranger's guesses never lock out an operator
 * elsewhere, and an operator who has the token is never refused for having used it.
 */
const STATE_PATH = '/session/state'

/** The route families registered beside the probe, under the admin prefix it is served at. */
function featuresOf (admin: FastifyInstance, request: FastifyRequest): Features {
  const base = (request.routeOptions.url ?? STATE_PATH).slice(0, -STATE_PATH.length)
  const has = (method: 'GET' | 'POST', path: string): boolean => admin.hasRoute({ method, url: base + path })
  return { journal: has('GET', ROUTE_FAMILIES.journal[0]), outbound: has('GET', ROUTE_FAMILIES.outbound[0]), portal: has('POST', ROUTE_FAMILIES.portal[0]) }
}

export function sessionRoutes (token: string, sessions: SessionKeys, cookiePath: string, failedLoginsPerMinute: number) {
  const matches = tokenMatcher([token])
  return async function anvilSessionRoutes (admin: FastifyInstance): Promise<void> {
    admin.post('/session', {
      config: { anvilPublic: true },
      schema: {
        summary: 'Log in to the console: sets an HttpOnly session cookie',
        security: [],
        body: Type.Object({ token: Type.String({ maxLength: 4096 }) }, { additionalProperties: false }),
        response: { 200: SessionAnswerSchema }
      }
    }, async (request, reply) => {
      // Counted before the compare and taken back unless it failed: logins at once cannot pass the limit together.
      const attempt = await sessions.store.attempt(request.ip, LOGIN_WINDOW_MS)
      if (attempt.count > failedLoginsPerMinute) {
        await sessions.store.forgive(request.ip)
        void reply.header('retry-after', String(Math.max(1, Math.ceil(attempt.retryAfterMs / 1000))))
        throw new errors.RATE_LIMITED(retryIn(attempt.retryAfterMs))
      }
      if (!matches((request.body as { token: string }).token)) throw new errors.UNAUTHORIZED(WRONG_ADMIN_TOKEN)
      await sessions.store.forgive(request.ip)
      return await sessions.open(request, reply, cookiePath)
    })
    admin.get('/session', { schema: { summary: 'The open session and its CSRF token', response: { 200: SessionAnswerSchema } } }, async (request) => {
      const session = await sessions.read(request)
      return session === undefined ? { csrfToken: null, expiresAt: null } : sessions.answer(session)
    })
    admin.get(STATE_PATH, {
      config: { anvilPublic: true },
      schema: {
        summary: 'Whether this browser has an open session, its CSRF token and the route families served if so', security: [], response: { 200: SessionStateSchema }
      }
    }, async (request) => {
      const session = await sessions.read(request)
      return session === undefined
        ? { authenticated: false, csrfToken: null, expiresAt: null }
        : { authenticated: true, features: featuresOf(admin, request), ...sessions.answer(session) }
    })
    admin.delete('/session', { schema: { summary: 'Log out of the console: ends this session on the server' } }, async (request, reply) => {
      await sessions.close(request, reply, cookiePath)
      return await reply.code(204).send()
    })
    admin.delete('/sessions', { schema: { summary: 'Log out everywhere: ends every console session' } }, async (request, reply) => {
      await sessions.store.endAll()
      await sessions.close(request, reply, cookiePath)
      return await reply.code(204).send()
    })
  }
}
