import { createHash, timingSafeEqual } from 'node:crypto'
import type { onRequestHookHandler } from 'fastify'
import { errors } from '../../src/shared/errors.js'

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest()

/**
 * Refuses a request without `Authorization: Bearer <token>`. Both sides are hashed first, so the compare
 * takes the same time whatever the length or content of what was sent.
 */
export function bearerGuard (token: string): onRequestHookHandler {
  const expected = digest(token)
  return (request, _reply, done) => {
    const header = request.headers.authorization
    const given = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : ''
    done(timingSafeEqual(digest(given), expected) && given !== '' ? undefined : new errors.UNAUTHORIZED())
  }
}
