import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { Outbound } from '../../src/outbox/outbound.js'
import { EventType } from '../../src/endpoints/endpoint-schemas.js'
import { PORTAL_READ } from './portal-access.js'
import { EventTypeInputSchema, EventTypeSchema, type EventTypeInput } from '../../src/catalog/event-types.js'
import { catalogJsonSchema } from '../../src/catalog/event-type-documents.js'

const tags = ['event-types']
const NameParams = Type.Object({ name: EventType() })

/** `/event-types`: the catalog publish checks data against (types from code are listed, not changed, here). */
export async function outboundEventTypeRoutes (admin: FastifyInstance, { outbound }: { outbound: Outbound }): Promise<void> {
  admin.get('/event-types', {
    config: PORTAL_READ,
    schema: { tags, response: { 200: Type.Object({ items: Type.Array(EventTypeSchema) }) } }
  }, async () => ({ items: await outbound.eventTypes.list() }))

  // The catalog as one JSON Schema of a delivery's body, for consumers' generators; `anvil event-types export` gives OpenAPI and AsyncAPI.
  admin.get('/event-types/schema.json', { config: PORTAL_READ, schema: { tags } }, async (_request, reply) =>
    await reply.type('application/schema+json').send(catalogJsonSchema(await outbound.eventTypes.list())))

  admin.put<{ Params: { name: string }, Body: EventTypeInput }>('/event-types/:name', {
    schema: { tags, params: NameParams, body: EventTypeInputSchema, response: { 200: EventTypeSchema } }
  }, async (request) => await outbound.eventTypes.put(request.params.name, request.body))

  admin.delete<{ Params: { name: string } }>('/event-types/:name', {
    schema: { tags, params: NameParams }
  }, async (request, reply) => {
    await outbound.eventTypes.remove(request.params.name)
    return await reply.code(204).send()
  })
}
