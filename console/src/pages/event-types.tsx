import { ADMIN_BASE } from '../api'
import { EventTypeCatalog } from '../catalog'

/** The event-type catalog: each type's description and JSON Schema, and where consumers get it as a document. */
export function EventTypesPage () {
  return (
    <>
      <h1>Event types</h1>
      <p>
        The types outgoing messages carry, each with the JSON Schema its data must fit. Consumers generate types from{' '}
        <a href={`${ADMIN_BASE}/event-types/schema.json`}>the catalog as JSON Schema</a>, or from{' '}
        <code>anvil event-types export --format openapi</code> (or <code>asyncapi</code>).
      </p>
      <EventTypeCatalog empty='No event type yet: define them in code with defineEventTypes, or PUT /admin/event-types/:name.' />
    </>
  )
}
