/**
 * The journal's admin routes, registered inside the admin scope (plugins/admin/admin.ts): behind
 * its token, errors as `{ error, code }`. They work on the journal with a database and on the dead letters
 * in Redis without one (src/event-log/event-log.ts).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import type { EventLog } from '../../src/event-log/event-log.js'
import { resolveFilter, statsWindowMs } from '../../src/event-log/event-filter.js'
import { JOURNAL_MAX_PAGE } from '../../src/event-log/event-queries.js'
import { SignatureFailureTally } from '../../src/event-log/signature-failures.js'
import { errors } from '../../src/shared/errors.js'
import { Whole } from '../../src/shared/schemas.js'
import { DURATION_PATTERN } from '../../src/time/duration.js'
import '../admin/erasure-routes.js'

/** The stats' default window. */
export const DEFAULT_STATS_WINDOW = '24h'

const Paging = { limit: Type.Optional(Whole(1, JOURNAL_MAX_PAGE)), cursor: Type.Optional(Type.String({ maxLength: 500 })) }
const PageQuery = Type.Object(Paging, { additionalProperties: false })
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 1000 }) })
const ReplayBody = Type.Object({
  filter: Type.Optional(Type.Unknown({ description: 'provider, source, type, status, errorClass, since, until, text' })),
  dryRun: Type.Optional(Type.Boolean()),
  ratePerSecond: Type.Optional(Whole(1, 100_000))
}, { additionalProperties: false })
const StatsQuery = Type.Object({ window: Type.Optional(Type.String({ pattern: DURATION_PATTERN, description: '30m, 24h, 7d' })) }, { additionalProperties: false })

const tags = ['journal']

export function journalAdminRoutes (log: EventLog): FastifyPluginAsync {
  return async function journalRoutes (admin: FastifyInstance) {
    const tally = new SignatureFailureTally().start()
    // The admin scope's DELETE /subjects/:subject erases the journal's events too (plugins/admin/erasure-routes.ts).
    if (log.erasure !== undefined && admin.hasDecorator('anvilErasure')) admin.anvilErasure.journal = log.erasure
    admin.addHook('onClose', async () => {
      tally.stop()
      await log.close()
    })

    // The filter is checked by the journal's own rule (resolveFilter), whose messages say what each field takes.
    admin.get<{ Querystring: Record<string, string> }>('/events', { schema: { tags } }, async (request) => {
      const { limit, cursor, ...filter } = request.query
      const size = limit === undefined ? undefined : Number(limit)
      if (size !== undefined && !(Number.isInteger(size) && size >= 1 && size <= JOURNAL_MAX_PAGE)) {
        throw new errors.INVALID_FILTER(`limit must be a whole number from 1 to ${JOURNAL_MAX_PAGE} (got ${JSON.stringify(limit)})`)
      }
      return await log.list(filter, { limit: size, cursor })
    })

    admin.post<{ Body: Static<typeof ReplayBody> }>('/events/replay', { schema: { tags, body: ReplayBody } }, async (request, reply) => {
      const { filter = {}, dryRun = false, ratePerSecond } = request.body
      resolveFilter(filter)
      if (dryRun) return { matched: await log.count(filter) }
      return await reply.code(202).send(await log.startReplay(filter, ratePerSecond))
    })

    admin.get<{ Params: Static<typeof IdParams> }>('/events/replay/:id', { schema: { tags, params: IdParams } },
      async (request) => await log.replayStatus(request.params.id))
    admin.delete<{ Params: Static<typeof IdParams> }>('/events/replay/:id', { schema: { tags, params: IdParams } },
      async (request) => await log.cancelReplay(request.params.id))
    admin.post<{ Params: Static<typeof IdParams> }>('/events/replay/:id/resume', { schema: { tags, params: IdParams } },
      async (request) => await log.resumeReplay(request.params.id))

    admin.get<{ Params: Static<typeof IdParams> }>('/events/:id', { schema: { tags, params: IdParams } },
      async (request) => await log.get(request.params.id))
    admin.post<{ Params: Static<typeof IdParams> }>('/events/:id/replay', { schema: { tags, params: IdParams } },
      async (request) => await log.replay(request.params.id))

    admin.get<{ Querystring: Static<typeof PageQuery> }>('/dead-letters', { schema: { tags, querystring: PageQuery } },
      async (request) => await log.deadLetters(request.query))

    admin.get<{ Querystring: Static<typeof StatsQuery> }>('/stats', { schema: { tags, querystring: StatsQuery } }, async (request) => {
      const windowMs = statsWindowMs(request.query.window ?? DEFAULT_STATS_WINDOW)
      return { source: log.kind, ...await log.stats(windowMs), signatureFailures: tally.snapshot() }
    })
  }
}
