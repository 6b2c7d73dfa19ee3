/** Route schemas of the outbound admin API that more than one route file uses. */
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { errors } from '../../src/shared/errors.js'
import { isTimeInRange, TIME_RANGE_RULE } from '../../src/time/time-range.js'
import { OUTBOUND_MAX_PAGE } from '../../src/paging/outbound-page-size.js'

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })

export const PageQuery = {
  /** @defaultValue 50 */
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: OUTBOUND_MAX_PAGE })),
  /** The `next` of the page before. */
  cursor: Type.Optional(Type.String({ maxLength: 500 }))
}

/** Every list answers `{ items, next }`; `next` is null on the last page. */
export const PageOf = <T extends TSchema>(item: T) => Type.Object({ items: Type.Array(item), next: Type.Union([Type.String(), Type.Null()]) })

export const ErrorReply = Type.Object({ error: Type.String(), code: Type.String() })

/** A time given by a caller: anything `Date.parse` reads, handed to PostgreSQL as ISO. */
export function isoTime (value: string, field: string): string {
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) throw new errors.BAD_REQUEST(`${field}: must be an ISO 8601 date-time`)
  if (!isTimeInRange(ms)) throw new errors.BAD_REQUEST(`${field}: ${TIME_RANGE_RULE}`)
  return new Date(ms).toISOString()
}

/** Routes whose body is optional: no body checks as `{}`, so the schema's defaults apply. */
export async function emptyBodyIsObject (request: FastifyRequest): Promise<void> {
  request.body ??= {}
}
