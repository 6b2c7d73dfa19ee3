/**
 * `anvil event-types export`: the event-type catalog as an OpenAPI 3.1, AsyncAPI 3.0 or JSON Schema document on
 * stdout (src/catalog/event-type-documents.ts), read through the admin API (--url: the types defined in code too)
 * or from PostgreSQL (the types stored through the API, which a line on stderr says).
 */
import type { AdminOrDatabaseConfig } from './config/load-database-config.js'
import { adminCall } from './admin-client.js'
import { catalogDocument, type CatalogFormat, type CatalogInfo } from '../src/catalog/event-type-documents.js'
import type { EventTypeEntry } from '../src/catalog/event-types.js'

async function entries (config: AdminOrDatabaseConfig): Promise<EventTypeEntry[]> {
  if (config.admin !== undefined) return (await adminCall(config.admin)<{ items: EventTypeEntry[] }>('GET', '/event-types')).items
  const { openDatabase } = await import('../src/db/database.js')
  const { createEventTypeCatalog } = await import('../src/catalog/event-types.js')
  const db = openDatabase(config.databaseUrl, { max: 1, ...(config.dbSchema === undefined ? {} : { schema: config.dbSchema }) })
  try {
    const stored = await createEventTypeCatalog(db).list()
    // stdout stays the document; an empty one, exit 0, must not pass for the catalog of a service that defines its types in code.
    process.stderr.write(`anvil: warning: read from the database, which holds only the types stored through the admin API (${stored.length === 0 ? 'none' : stored.length}); ` +
      'types defined in code (defineEventTypes) are not in it: give --url (your server, with ANVIL_ADMIN_TOKEN) for the whole catalog\n')
    return stored
  } finally {
    await db.close()
  }
}

/** The document, as indented JSON, on stdout. */
export async function exportEventTypes (config: AdminOrDatabaseConfig, format: CatalogFormat, info: CatalogInfo): Promise<void> {
  process.stdout.write(JSON.stringify(catalogDocument(format, await entries(config), info), null, 2) + '\n')
}
