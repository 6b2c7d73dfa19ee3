import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { Outbound } from '../../src/outbox/outbound.js'
import {
  EndpointInputSchema, EndpointPatchSchema, EndpointSchema, EndpointWithSecretSchema, EventType, Tenant, type EndpointInput, type EndpointPatch
} from '../../src/outbox/endpoint-schemas.js'
import { emptyBodyIsObject, IdParams, isoTime, PageOf, PageQuery } from './outbound-schemas.js'

const tags = ['endpoints']

/** `/endpoints`: CRUD, secret rotation, a test event, and recovery of what failed since a time. */
export async function outboundEndpointRoutes (admin: FastifyInstance, { outbound }: { outbound: Outbound }): Promise<void> {
  admin.post<{ Body: EndpointInput }>('/endpoints', {
    schema: { tags, body: EndpointInputSchema, response: { 201: EndpointWithSecretSchema } }
  }, async (request, reply) => await reply.code(201).send(await outbound.endpoints.create(request.body)))

  admin.get<{ Querystring: { tenant?: string, limit?: number, cursor?: string } }>('/endpoints', {
    schema: { tags, querystring: Type.Object({ tenant: Type.Optional(Tenant()), ...PageQuery }, { additionalProperties: false }), response: { 200: PageOf(EndpointSchema) } }
  }, async (request) => await outbound.endpoints.list(request.query))

  admin.get<{ Params: { id: string } }>('/endpoints/:id', {
    schema: { tags, params: IdParams, response: { 200: EndpointSchema } }
  }, async (request) => await outbound.endpoints.get(request.params.id))

  admin.patch<{ Params: { id: string }, Body: EndpointPatch }>('/endpoints/:id', {
    schema: { tags, params: IdParams, body: EndpointPatchSchema, response: { 200: EndpointSchema } }
  }, async (request) => await outbound.endpoints.update(request.params.id, request.body))

  admin.delete<{ Params: { id: string } }>('/endpoints/:id', {
    schema: { tags, params: IdParams }
  }, async (request, reply) => {
    await outbound.endpoints.remove(request.params.id)
    return await reply.code(204).send()
  })

  admin.post<{ Params: { id: string }, Body: { graceSeconds?: number } }>('/endpoints/:id/rotate-secret', {
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
  }, async (request) => await outbound.endpoints.rotateSecret(request.params.id, request.body.graceSeconds))

  admin.post<{ Params: { id: string }, Body: { type?: string, data?: unknown } }>('/endpoints/:id/test', {
    preValidation: emptyBodyIsObject,
    schema: {
      tags,
      params: IdParams,
      body: Type.Object({ type: Type.Optional(EventType()), data: Type.Optional(Type.Unknown()) }, { additionalProperties: false }),
      response: { 202: Type.Object({ messageId: Type.String() }) }
    }
  }, async (request, reply) => await reply.code(202).send(await outbound.resend.sendTest(request.params.id, request.body)))

  admin.post<{ Params: { id: string }, Body: { since: string } }>('/endpoints/:id/recover', {
    schema: {
      tags,
      params: IdParams,
      body: Type.Object({ since: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
      response: { 202: Type.Object({ messageIds: Type.Array(Type.String()) }) }
    }
  }, async (request, reply) =>
    await reply.code(202).send(await outbound.resend.recover(request.params.id, isoTime(request.body.since, 'since'))))
}
