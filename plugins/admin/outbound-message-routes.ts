import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { Outbound } from '../../src/outbox/outbound.js'
import { DeliverySchema, DeliveryStatus, MessageWithDeliveriesSchema, UndeliveredSchema, type Delivery } from '../../src/delivery-log/delivery-schemas.js'
import { MessageResendSchema, ResendFilterSchema, type ResendFilter } from '../../src/resend/resender.js'
import { MessageInputSchema, type MessageInput } from '../../src/outbox/publish.js'
import { tenantView } from '../../src/portal/tenant-view.js'
import { emptyBodyIsObject, IdParams, isoTime, PageOf, PageQuery } from './outbound-schemas.js'
import { countForTenant, PORTAL_READ, PORTAL_WRITE, portalTenant } from './portal-access.js'

const DryRun = { /** Say what it would do, and do nothing. @defaultValue false */ dryRun: Type.Optional(Type.Boolean()) }
const HandRetrySchema = Type.Object({
  messageId: Type.String(),
  endpointId: Type.String(),
  jobId: Type.String(),
  /** True (status 200): a hand retry of this message to this endpoint was already queued, and `jobId` is it. */
  alreadyQueued: Type.Boolean()
})
/** W3C trace context (docs/outgoing-webhooks.md, "Trace context"); a malformed one is ignored, as the spec has receivers do. */
const TraceHeaders = Type.Object({
  /** `00-<trace id>-<parent id>-<flags>`: each delivery of the message carries this trace to its receiver. */
  traceparent: Type.Optional(Type.String({ description: 'W3C traceparent: each delivery carries the trace to its receiver; a malformed one is ignored' })),
  /** Kept beside a valid traceparent and sent with it. */
  tracestate: Type.Optional(Type.String({ description: 'W3C tracestate, sent beside the traceparent' }))
})
const ResendPageSchema = Type.Composite([PageOf(MessageResendSchema), Type.Object({ dryRun: Type.Boolean() })])

/**
 * `/messages`, `/deliveries` and `/undelivered`: publish, look up, retry, re-send what failed. A portal token
 * reads its tenant's messages and deliveries and retries them; publishing and the bulk re-sends are operators'.
 */
export async function outboundMessageRoutes (admin: FastifyInstance, { outbound }: { outbound: Outbound }): Promise<void> {
  const view = tenantView(outbound)

  admin.post<{ Body: MessageInput, Headers: { traceparent?: string, tracestate?: string } }>('/messages', {
    schema: { tags: ['messages'], headers: TraceHeaders, body: MessageInputSchema, response: { 202: Type.Object({ messageId: Type.String() }) } }
  }, async (request, reply) => {
    const { traceparent, tracestate } = request.headers
    const trace = { ...(traceparent === undefined ? {} : { traceparent }), ...(tracestate === undefined ? {} : { tracestate }) }
    return await reply.code(202).send(await outbound.publish(request.body, trace))
  })

  admin.get<{ Params: { id: string } }>('/messages/:id', {
    config: PORTAL_READ,
    schema: { tags: ['messages'], params: IdParams, response: { 200: MessageWithDeliveriesSchema } }
  }, async (request) => await view.message(request.params.id, portalTenant(request)))

  admin.post<{ Params: { id: string }, Body: { dryRun?: boolean } }>('/messages/:id/resend', {
    preValidation: emptyBodyIsObject,
    schema: {
      tags: ['messages'],
      params: IdParams,
      body: Type.Object(DryRun, { additionalProperties: false }),
      response: { 200: MessageResendSchema, 202: MessageResendSchema }
    }
  }, async (request, reply) => {
    const dryRun = request.body.dryRun === true
    return await reply.code(dryRun ? 200 : 202).send(await outbound.resend.message(request.params.id, { dryRun }))
  })

  admin.post<{ Body: { filter?: ResendFilter, dryRun?: boolean, limit?: number, cursor?: string } }>('/messages/resend', {
    preValidation: emptyBodyIsObject,
    schema: {
      tags: ['messages'],
      body: Type.Object({ filter: Type.Optional(ResendFilterSchema), ...DryRun, ...PageQuery }, { additionalProperties: false }),
      response: { 200: ResendPageSchema, 202: ResendPageSchema }
    }
  }, async (request, reply) => {
    const { filter = {}, dryRun = false, limit, cursor } = request.body
    const times = {
      ...(filter.since === undefined ? {} : { since: isoTime(filter.since, 'filter.since') }),
      ...(filter.until === undefined ? {} : { until: isoTime(filter.until, 'filter.until') })
    }
    const page = await outbound.resend.matching({ ...filter, ...times }, { dryRun, limit, cursor })
    return await reply.code(dryRun ? 200 : 202).send(page)
  })

  admin.get<{ Querystring: { endpoint?: string, status?: Delivery['status'], since?: string, limit?: number, cursor?: string } }>('/deliveries', {
    config: PORTAL_READ,
    schema: {
      tags: ['deliveries'],
      querystring: Type.Object({
        endpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        status: Type.Optional(DeliveryStatus()),
        /** ISO 8601: attempts at or after it. */
        since: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        ...PageQuery
      }, { additionalProperties: false }),
      response: { 200: PageOf(DeliverySchema) }
    }
  }, async (request) => {
    const { since, ...query } = request.query
    const tenant = portalTenant(request)
    if (tenant !== undefined && query.endpoint !== undefined) await view.endpoint(query.endpoint, tenant)
    return await outbound.deliveries.list({
      ...query, ...(since === undefined ? {} : { since: isoTime(since, 'since') }), ...(tenant === undefined ? {} : { tenant })
    })
  })

  admin.post<{ Params: { id: string } }>('/deliveries/:id/retry', {
    config: PORTAL_WRITE,
    schema: {
      tags: ['deliveries'],
      params: IdParams,
      response: { 200: HandRetrySchema, 202: HandRetrySchema }
    }
  }, async (request, reply) => {
    await countForTenant(request, 'retriesPerMinute')
    const delivery = await view.delivery(request.params.id, portalTenant(request))
    const retry = await outbound.resend.retry(request.params.id, delivery)
    // 200: the pair's hand retry already queued is the answer, and nothing new was queued.
    return await reply.code(retry.alreadyQueued ? 200 : 202).send(retry)
  })

  admin.get<{ Querystring: { endpoint?: string, limit?: number, cursor?: string } }>('/undelivered', {
    schema: {
      tags: ['deliveries'],
      querystring: Type.Object({ endpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...PageQuery }, { additionalProperties: false }),
      response: { 200: PageOf(UndeliveredSchema) }
    }
  }, async (request) => await outbound.deliveries.undelivered(request.query))

  // The outbox backlog, for the console's overview: messages not yet turned into deliveries.
  admin.get('/outbox', {
    schema: {
      tags: ['messages'],
      response: { 200: Type.Object({ pending: Type.Integer(), failed: Type.Integer(), oldestPendingSeconds: Type.Integer() }) }
    }
  }, async () => await outbound.outboxStats())
}
