import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { Outbound } from '../../src/outbox/outbound.js'
import { EndpointSchema, EndpointWithSecretSchema } from '../../src/endpoints/endpoint-schemas.js'
import { OperationalEndpointInputSchema, type OperationalEndpointInput } from '../../src/endpoints/operational-endpoints.js'
import { IdParams, PageOf, PageQuery } from './outbound-schemas.js'

const tags = ['operational-endpoints']

/**
 * `/operational-endpoints`: the operator's endpoints for Anvil's operational events (the admin token only). Their
 * deliveries, secret rotation and test event are the `/endpoints/:id` routes'.
 */
export async function outboundOperationalRoutes (admin: FastifyInstance, { outbound }: { outbound: Outbound }): Promise<void> {
  admin.post<{ Body: OperationalEndpointInput }>('/operational-endpoints', {
    schema: { tags, body: OperationalEndpointInputSchema, response: { 201: EndpointWithSecretSchema } }
  }, async (request, reply) => await reply.code(201).send(await outbound.operationalEndpoints.create(request.body)))

  admin.get<{ Querystring: { limit?: number, cursor?: string } }>('/operational-endpoints', {
    schema: { tags, querystring: Type.Object(PageQuery, { additionalProperties: false }), response: { 200: PageOf(EndpointSchema) } }
  }, async (request) => await outbound.operationalEndpoints.list(request.query))

  admin.delete<{ Params: { id: string } }>('/operational-endpoints/:id', {
    schema: { tags, params: IdParams }
  }, async (request, reply) => {
    await outbound.operationalEndpoints.remove(request.params.id)
    return await reply.code(204).send()
  })
}
