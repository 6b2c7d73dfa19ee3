/**
 * The event-type catalog as documents consumers generate types from: one JSON Schema (2020-12) of every
 * delivery's body, an OpenAPI 3.1 document (a webhook per type) and an AsyncAPI 3.0 one. Each body is the envelope
 * `{ id, type, timestamp, data }` (src/outbox/fan-out.ts), its `data` the type's schema as given.
 */
import type { EventTypeEntry } from './event-types.js'

export type CatalogEntry = Pick<EventTypeEntry, 'name' | 'description' | 'schema' | 'deprecated'>

export const CATALOG_FORMATS = ['jsonschema', 'openapi', 'asyncapi'] as const
export type CatalogFormat = typeof CATALOG_FORMATS[number]

export interface CatalogInfo {
  /** @defaultValue `'Webhook events'` */
  title?: string
  /** The version of the webhooks' API the document describes. @defaultValue `'1.0.0'` */
  version?: string
}

type Json = Record<string, unknown>

const HEADERS = 'WebhookHeaders'
const HEADER_SCHEMAS: Record<string, Json> = {
  'webhook-id': { type: 'string', description: 'The message id, the same for every attempt: dedupe on it' },
  'webhook-timestamp': { type: 'string', pattern: '^[0-9]+$', description: 'When this attempt was signed, in Unix seconds' },
  'webhook-signature': { type: 'string', description: 'Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`' }
}

/** `invoice.paid` → `InvoicePaid`: a component name generators turn into a type name. */
function pascal (name: string): string {
  const joined = name.split(/[^A-Za-z0-9]+/).filter((part) => part !== '').map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('')
  return /^[A-Za-z]/.test(joined) ? joined : `Event${joined}`
}

interface Named extends CatalogEntry { component: string, data: unknown }

/** Each entry with a component name of its own (a number added when two names meet) and its data schema as JSON. */
function named (entries: readonly CatalogEntry[]): Named[] {
  const used = new Set([HEADERS])
  // By code unit, not locale: the same catalog gets the same names on every machine.
  return [...entries].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0).map((entry) => {
    const base = pascal(entry.name)
    let component = base
    for (let n = 2; used.has(component) || used.has(`${component}Data`); n++) component = `${base}${n}`
    used.add(component).add(`${component}Data`)
    // Through JSON: a TypeBox schema's symbol keys go; `$schema` belongs to a document's root, not to a part of it.
    const { $schema: _dialect, ...data } = JSON.parse(JSON.stringify(entry.schema ?? {})) as Json
    return { ...entry, component, data }
  })
}

/** The body every delivery of the type carries; `ref` points at its data schema. */
function envelope (entry: Named, ref: (component: string) => string): Json {
  return {
    type: 'object',
    title: entry.component,
    ...(entry.description === '' ? {} : { description: entry.description }),
    ...(entry.deprecated ? { deprecated: true } : {}),
    required: ['id', 'type', 'timestamp', 'data'],
    properties: {
      id: HEADER_SCHEMAS['webhook-id'],
      type: { const: entry.name },
      timestamp: { type: 'string', format: 'date-time', description: 'When the message was published' },
      data: { $ref: ref(`${entry.component}Data`) }
    }
  }
}

function schemas (entries: Named[], ref: (component: string) => string): Json {
  return Object.fromEntries(entries.flatMap((entry) => [[entry.component, envelope(entry, ref)], [`${entry.component}Data`, entry.data]]))
}

function title (info: CatalogInfo): string {
  return info.title ?? 'Webhook events'
}

/** One JSON Schema of a delivery's body, whatever its type (`oneOf`, told apart by `type`). */
export function catalogJsonSchema (entries: readonly CatalogEntry[], info: CatalogInfo = {}): Json {
  const all = named(entries)
  const ref = (component: string): string => `#/$defs/${component}`
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: title(info),
    description: 'The JSON body of a webhook delivery, by its type',
    ...(all.length === 0 ? {} : { oneOf: all.map((entry) => ({ $ref: ref(entry.component) })) }),
    $defs: schemas(all, ref)
  }
}

/** OpenAPI 3.1: a webhook per type, its body and the Standard Webhooks headers. */
export function catalogOpenApi (entries: readonly CatalogEntry[], info: CatalogInfo = {}): Json {
  const all = named(entries)
  const ref = (component: string): string => `#/components/schemas/${component}`
  const parameters = Object.keys(HEADER_SCHEMAS).map((name) => ({ $ref: `#/components/parameters/${name}` }))
  return {
    openapi: '3.1.0',
    info: { title: title(info), version: info.version ?? '1.0.0', description: 'The webhooks this service sends: one per event type' },
    webhooks: Object.fromEntries(all.map((entry) => [entry.name, {
      post: {
        operationId: entry.component,
        summary: entry.name,
        ...(entry.description === '' ? {} : { description: entry.description }),
        ...(entry.deprecated ? { deprecated: true } : {}),
        parameters,
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: ref(entry.component) } } } },
        responses: { '2XX': { description: 'Delivered; any other answer, or none, is retried on the schedule' } }
      }
    }])),
    components: {
      schemas: schemas(all, ref),
      parameters: Object.fromEntries(Object.entries(HEADER_SCHEMAS).map(([name, schema]) =>
        [name, { name, in: 'header', required: true, description: schema.description, schema: { type: 'string' } }]))
    }
  }
}

/** AsyncAPI 3.0: one channel (each endpoint's URL), a message and a `send` operation per type. */
export function catalogAsyncApi (entries: readonly CatalogEntry[], info: CatalogInfo = {}): Json {
  const all = named(entries)
  const ref = (component: string): string => `#/components/schemas/${component}`
  return {
    asyncapi: '3.0.0',
    info: { title: title(info), version: info.version ?? '1.0.0', description: 'The webhooks this service sends: one message per event type' },
    defaultContentType: 'application/json',
    channels: {
      webhooks: {
        address: null,
        description: 'The URL of each endpoint subscribed to the type: an HTTP POST per delivery',
        messages: Object.fromEntries(all.map((entry) => [entry.component, { $ref: `#/components/messages/${entry.component}` }]))
      }
    },
    operations: Object.fromEntries(all.map((entry) => [`send${entry.component}`, {
      action: 'send',
      channel: { $ref: '#/channels/webhooks' },
      summary: entry.name,
      messages: [{ $ref: `#/channels/webhooks/messages/${entry.component}` }]
    }])),
    components: {
      schemas: { ...schemas(all, ref), [HEADERS]: { type: 'object', required: Object.keys(HEADER_SCHEMAS), properties: HEADER_SCHEMAS } },
      messages: Object.fromEntries(all.map((entry) => [entry.component, {
        name: entry.name,
        title: entry.name,
        ...(entry.description === '' && !entry.deprecated ? {} : { summary: `${entry.deprecated ? 'Deprecated. ' : ''}${entry.description}`.trim() }),
        contentType: 'application/json',
        headers: { $ref: ref(HEADERS) },
        payload: { $ref: ref(entry.component) }
      }]))
    }
  }
}

/** The document of `format`: what `anvil event-types export` prints and `GET /admin/event-types/schema.json` answers. */
export function catalogDocument (format: CatalogFormat, entries: readonly CatalogEntry[], info: CatalogInfo = {}): Json {
  switch (format) {
    case 'openapi': return catalogOpenApi(entries, info)
    case 'asyncapi': return catalogAsyncApi(entries, info)
    default: return catalogJsonSchema(entries, info)
  }
}
