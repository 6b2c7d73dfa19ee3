import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { databaseErrorKind } from '../../src/db/database-errors.js'
import { errorReply, errors, isAnvilError } from '../../src/shared/errors.js'

/** First line only: a reason is one line, and PostgreSQL's messages may carry a DETAIL after it. */
const firstLine = (message: string): string => message.split('\n')[0] as string

/**
 * The error a route's failure becomes for its caller: its own when Anvil raised it; a 400 when PostgreSQL
 * refused the caller's data (the check a route missed, said in one line); a 503 when the database is out of
 * reach; NOT_MIGRATED, saying what to run, when its schema lacks a table or column; else a 500.
 */
function answerFor (error: FastifyError): FastifyError {
  if (isAnvilError(error) || (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)) return error
  const kind = databaseErrorKind(error)
  if (kind === 'input') return new errors.BAD_REQUEST(`invalid input: ${firstLine(error.message)}`)
  if (kind === 'unavailable') return new errors.DATABASE_UNAVAILABLE(firstLine(error.message), { cause: error })
  if (kind === 'unmigrated') return new errors.NOT_MIGRATED(firstLine(error.message), { cause: error })
  return error
}

/** Every admin error is `{ error, code }` with its 4xx; a 5xx keeps its details in the log. */
export async function adminErrorHandler (raised: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const error = answerFor(raised)
  const statusCode = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500
  if (statusCode === 503) {
    request.log.warn({ err: raised.message }, 'anvil admin: a dependency is unavailable')
  } else if (statusCode >= 500) {
    request.log.error({ err: error }, 'anvil admin: request failed')
    if (!isAnvilError(error)) return await reply.code(500).send(errorReply(error, 500, 'ANVIL_ERR_INTERNAL'))
  }
  // A limit that lifts by itself (a tenant's per-minute counts) says when.
  const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds
  if (typeof retryAfter === 'number') void reply.header('retry-after', String(retryAfter))
  const body = errorReply(error, statusCode, statusCode === 404 ? 'ANVIL_ERR_NOT_FOUND' : 'ANVIL_ERR_BAD_REQUEST')
  return await reply.code(statusCode).send({ ...body, error: firstLine(body.error) })
}
