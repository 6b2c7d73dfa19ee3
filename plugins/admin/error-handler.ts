import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isAnvilError } from '../../src/shared/errors.js'

/** Every admin error is `{ error, code }` with its 4xx; a 5xx keeps its details in the log. */
export async function adminErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const statusCode = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500
  if (statusCode >= 500) {
    request.log.error({ err: error }, 'anvil admin: request failed')
    if (!isAnvilError(error)) return await reply.code(500).send({ error: 'Internal Server Error', code: 'ANVIL_ERR_INTERNAL' })
  }
  const code = isAnvilError(error) ? error.code : statusCode === 404 ? 'ANVIL_ERR_NOT_FOUND' : 'ANVIL_ERR_BAD_REQUEST'
  return await reply.code(statusCode).send({ error: error.message, code })
}
