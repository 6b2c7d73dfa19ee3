import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { Outbound } from '../../src/outbox/outbound.js'
import {
  EndpointInputSchema, EndpointPatchSchema, EndpointSchema, EndpointWithSecretSchema, EventType, Tenant, type Endpoint, type EndpointInput, type EndpointPatch
} from '../../src/endpoints/endpoint-schemas.js'
import { requireOwnTenant, tenantView } from '../../src/portal/tenant-view.js'
import { emptyBodyIsObject, IdParams, isoTime, PageOf, PageQuery } from './outbound-schemas.js'
import { countForTenant, PORTAL_READ, PORTAL_WRITE, portalTenant } from './portal-access.js'

const tags = ['endpoints']

/**
 * `/endpoints`: CRUD, secret rotation, a test event, and recovery of what failed since a time. Each is open to a
 * portal token on its own tenant's endpoints: another tenant's is 404, a body or query naming one 403.
 */
export async function outboundEndpointRoutes (admin: FastifyInstance, { outbound }: { outbound: Outbound }): Promise<void> {
  const view = tenantView(outbound)
  /** The request's endpoint `:id`, NOT_FOUND when a portal token's tenant does not own it. */
  const own = async (request: FastifyRequest<{ Params: { id: string } }>): Promise<Endpoint> => await view.endpoint(request.params.id, portalTenant(request))

  admin.post<{ Body: EndpointInput }>('/endpoints', {
    config: PORTAL_WRITE,
    schema: { tags, body: EndpointInputSchema, response: { 201: EndpointWithSecretSchema } }
  }, async (request, reply) => {
    const tenant = portalTenant(request)
    requireOwnTenant(request.body.tenant, tenant)
    // A portal token creates within its tenant's endpointsPerTenant; an operator is never refused.
    const created = tenant === undefined
      ? await outbound.endpoints.create(request.body)
      : await outbound.endpoints.create({ ...request.body, tenant }, { maxPerTenant: request.anvilQuotas?.limits.endpointsPerTenant })
    return await reply.code(201).send(created)
  })

  admin.get<{ Querystring: { tenant?: string, limit?: number, cursor?: string } }>('/endpoints', {
    config: PORTAL_READ,
    schema: { tags, querystring: Type.Object({ tenant: Type.Optional(Tenant()), ...PageQuery }, { additionalProperties: false }), response: { 200: PageOf(EndpointSchema) } }
  }, async (request) => {
    const tenant = portalTenant(request)
    requireOwnTenant(request.query.tenant, tenant)
    return await outbound.endpoints.list(tenant === undefined ? request.query : { ...request.query, tenant })
  })

  admin.get<{ Params: { id: string } }>('/endpoints/:id', {
    config: PORTAL_READ,
    schema: { tags, params: IdParams, response: { 200: EndpointSchema } }
  }, own)

  admin.patch<{ Params: { id: string }, Body: EndpointPatch }>('/endpoints/:id', {
    config: PORTAL_WRITE,
    schema: { tags, params: IdParams, body: EndpointPatchSchema, response: { 200: EndpointSchema } }
  }, async (request) => {
    await own(request)
    requireOwnTenant(request.body.tenant, portalTenant(request))
    return await outbound.endpoints.update(request.params.id, request.body)
  })

  admin.delete<{ Params: { id: string } }>('/endpoints/:id', {
    config: PORTAL_WRITE,
    schema: { tags, params: IdParams }
  }, async (request, reply) => {
    await own(request)
    await outbound.endpoints.remove(request.params.id)
    return await reply.code(204).send()
  })

  // A reveal is a write: a read-only link never sees a signing secret.
  admin.get<{ Params: { id: string } }>('/endpoints/:id/secret', {
    config: PORTAL_WRITE,
    schema: { tags, summary: 'The endpoint\'s current signing secret', params: IdParams, response: { 200: EndpointWithSecretSchema } }
  }, async (request, reply) => {
    await own(request)
    void reply.header('cache-control', 'no-store')
    return await outbound.endpoints.currentSecret(request.params.id)
  })

  admin.post<{ Params: { id: string }, Body: { graceSeconds?: number } }>('/endpoints/:id/rotate-secret', {
    config: PORTAL_WRITE,
    preValidation: emptyBodyIsObject,
    schema: {
      tags,
      params: IdParams,
      body: Type.Object({
        /** How long the old secrets keep signing. @defaultValue the service's (24 h) */
        graceSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 24 * 60 * 60 }))
      }, { additionalProperties: false }),
      response: { 200: EndpointWithSecretSchema }
    }
  }, async (request) => {
    await own(request)
    return await outbound.endpoints.rotateSecret(request.params.id, request.body.graceSeconds)
  })

  admin.post<{ Params: { id: string }, Body: { type?: string, data?: unknown } }>('/endpoints/:id/test', {
    config: PORTAL_WRITE,
    preValidation: emptyBodyIsObject,
    schema: {
      tags,
      params: IdParams,
      body: Type.Object({ type: Type.Optional(EventType()), data: Type.Optional(Type.Unknown()) }, { additionalProperties: false }),
      response: { 202: Type.Object({ messageId: Type.String() }) }
    }
  }, async (request, reply) => {
    await own(request)
    await countForTenant(request, 'testEventsPerMinute')
    const maxBytes = request.anvilQuotas?.limits.testEventBytes
    return await reply.code(202).send(await outbound.resend.sendTest(request.params.id, request.body, maxBytes === undefined ? {} : { maxBytes }))
  })

  admin.post<{ Params: { id: string }, Body: { since: string } }>('/endpoints/:id/recover', {
    config: PORTAL_WRITE,
    schema: {
      tags,
      params: IdParams,
      body: Type.Object({ since: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      response: { 202: Type.Object({ messageIds: Type.Array(Type.String()) }) }
    }
  }, async (request, reply) => {
    await own(request)
    await countForTenant(request, 'retriesPerMinute')
    return await reply.code(202).send(await outbound.resend.recover(request.params.id, isoTime(request.body.since, 'since')))
  })
}
