import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { errors } from '../../src/shared/errors.js'
import { tokenMatcher } from './admin-guard.js'
import type { SessionKeys } from './session.js'

const SessionAnswerSchema = Type.Object({ csrfToken: Type.Union([Type.String(), Type.Null()]), expiresAt: Type.Union([Type.String(), Type.Null()]) })

/**
 * The console's login: `POST <prefix>/session { token }` (rate-limited) sets the session cookie and answers the
 * CSRF token; `GET` answers it again for the open session (null for a Bearer caller); `DELETE` ends it.
 */
export function sessionRoutes (token: string, sessions: SessionKeys, cookiePath: string, loginsPerMinute: number) {
  const matches = tokenMatcher(token)
  return async function anvilSessionRoutes (admin: FastifyInstance): Promise<void> {
    admin.post('/session', {
      config: {
        anvilPublic: true,
        rateLimit: { max: loginsPerMinute, timeWindow: 60_000, errorResponseBuilder: (_request, context) => new errors.RATE_LIMITED(context.after) }
      },
      schema: {
        summary: 'Log in to the console: sets an HttpOnly session cookie',
        security: [],
        body: Type.Object({ token: Type.String({ maxLength: 4096 }) }, { additionalProperties: false }),
        response: { 200: SessionAnswerSchema }
      }
    }, async (request, reply) => {
      if (!matches((request.body as { token: string }).token)) throw new errors.UNAUTHORIZED()
      return sessions.open(request, reply, cookiePath)
    })
    admin.get('/session', { schema: { summary: 'The open session and its CSRF token', response: { 200: SessionAnswerSchema } } }, async (request) => {
      const session = sessions.read(request)
      return session === undefined ? { csrfToken: null, expiresAt: null } : sessions.answer(session)
    })
    admin.delete('/session', { schema: { summary: 'Log out of the console' } }, async (_request, reply) => {
      sessions.close(reply, cookiePath)
      return await reply.code(204).send()
    })
  }
}
