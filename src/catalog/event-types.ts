/**
 * The event-type catalog: each type's description and the JSON Schema its data must fit. Types come from the
 * database (`PUT /admin/event-types/:name`) and from code (`defineEventTypes`, TypeBox schemas, which are JSON
 * Schema too); publish checks a message's data against its type's schema, and with `strict` refuses a type the
 * catalog does not hold.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type pg from 'pg'
import type { Database } from '../db/database.js'
import { errors } from '../shared/errors.js'
import * as sql from '../sql/event-types.js'
import { EventType } from '../endpoints/endpoint-schemas.js'
import type { PublishOptions, PublishResult } from '../outbox/publish.js'
import type { EventTypeEntry } from './event-type-entry.js'
import { catalogAjv } from './catalog-ajv.js'
import { createSchemaChecker, DEFAULT_SCHEMA_CHECK_TIMEOUT_MS } from './schema-checker.js'
import { schemaBounds, DEFAULT_MAX_SCHEMA_BYTES, DEFAULT_MAX_SCHEMA_DEPTH } from './schema-bounds.js'

/** How long a process keeps a stored type's schema; a change made through another process shows within it. */
export const EVENT_TYPE_CACHE_MS = 5000

/** A pool, or the caller's client inside its transaction. */
type Queryable = pg.ClientBase | pg.Pool

export const EventTypeInputSchema = Type.Object({
  /** @defaultValue `''` */
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  /** A JSON Schema (draft-07) the data of every message of this type must fit. */
  schema: Type.Object({}, { additionalProperties: true }),
  /** Still accepted, but flagged for consumers to move off. @defaultValue false */
  deprecated: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type EventTypeInput = Static<typeof EventTypeInputSchema>

/** The answer's schema; its type is `EventTypeEntry` (./event-type-entry.ts, which the console shares), the compiler holds the two equal. */
export const EventTypeSchema = Type.Object({
  name: EventType(),
  description: Type.String(),
  schema: Type.Unknown(),
  deprecated: Type.Boolean(),
  source: Type.Union([Type.Literal('code'), Type.Literal('api')]),
  updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()])
})
export type { EventTypeEntry }
const sameShape: [Static<typeof EventTypeSchema>, EventTypeEntry] extends [EventTypeEntry, Static<typeof EventTypeSchema>] ? true : never = true
void sameShape

/** Types defined in code: a name and its TypeBox schema. */
export type EventTypeMap = Record<string, TSchema>

/** A message whose data has the shape its type's schema gives. */
export type TypedMessage<T extends EventTypeMap> = {
  [K in keyof T & string]: { type: K, data: Static<T[K]>, tenant?: string, id?: string }
}[keyof T & string]

/** A publish that takes messages of shape `M`. */
type PublishOf<M> = (message: M, options?: PublishOptions) => Promise<PublishResult>

/** A catalog defined in code: give it to `anvilOutbound` (`eventTypes`), and type `publish` with `typed` or `AnvilTypes`. */
export interface EventTypes<T extends EventTypeMap> {
  readonly schemas: T
  /** The same publish (any, or one typed by this catalog already), typed by the catalog: an unknown type or a wrong field is a compile error. */
  typed: (publish: PublishOf<TypedMessage<T>>) => PublishOf<TypedMessage<T>>
}

/** INVALID_SCHEMA naming the type and what ajv (or RE2, for a pattern) found wrong. */
const invalidSchema = (name: string, problem: string): Error => new errors.INVALID_SCHEMA(name, problem.startsWith('Invalid regular expression')
  ? `patterns run in linear time (RE2: no look-around, no back-reference): ${problem}`
  : problem.replace(/^schema is invalid: /, ''))

/**
 * Refuses a type whose schema is no JSON Schema now, with its name, rather than at its first publish. Compiled
 * here, on the loop, as code is trusted; the checks of data run on the catalog's worker thread.
 */
export function defineEventTypes<T extends EventTypeMap> (schemas: T): EventTypes<T> {
  for (const [name, schema] of Object.entries(schemas)) {
    try {
      catalogAjv().compile(schema)
    } catch (err) {
      throw invalidSchema(name, (err as Error).message)
    }
  }
  return { schemas, typed: (publish) => async (message, options) => await publish(message, options) }
}

export interface EventTypeCatalog {
  list (): Promise<EventTypeEntry[]>
  put (name: string, input: EventTypeInput): Promise<EventTypeEntry>
  remove (name: string): Promise<void>
  /**
   * Throws 400 `ANVIL_ERR_INVALID_MESSAGE` naming the JSON pointer of the first field that breaks the schema, or
   * `ANVIL_ERR_SCHEMA_TOO_SLOW` when the check runs past its time (it runs on a worker thread, never on the loop),
   * or `ANVIL_ERR_INVALID_SCHEMA` for a type stored before its schema was checked.
   */
  check (type: string, data: unknown, client?: Queryable): Promise<void>
  /** `check` with the data as JSON text already; `strict` overrides the catalog's for this check. */
  checkJson (type: string, json: string, client?: Queryable, strict?: boolean): Promise<void>
  /** Ends the worker thread that checks data. */
  close (): Promise<void>
}

export interface EventTypeCatalogOptions {
  code?: EventTypeMap
  strict?: boolean
  /** @defaultValue 131072 (128 KiB) */
  maxSchemaBytes?: number
  /** @defaultValue 64 */
  maxSchemaDepth?: number
  /** @defaultValue 1000 */
  checkTimeoutMs?: number
}

export function createEventTypeCatalog (db: Database, options: EventTypeCatalogOptions = {}): EventTypeCatalog {
  // Each schema is compiled once per text, in an Ajv of its own, on a worker thread (src/catalog/schema-checker.ts).
  const checker = createSchemaChecker({ timeoutMs: options.checkTimeoutMs ?? DEFAULT_SCHEMA_CHECK_TIMEOUT_MS })
  const bounds = schemaBounds(options.maxSchemaBytes ?? DEFAULT_MAX_SCHEMA_BYTES, options.maxSchemaDepth ?? DEFAULT_MAX_SCHEMA_DEPTH)
  // A Map, not the object: a type named `constructor` is not the object's inherited member.
  const code = new Map(Object.entries(options.code ?? {}))
  const codeTexts = new Map([...code].map(([name, schema]) => [name, JSON.stringify(schema)]))
  // A stored type's schema, kept a few seconds: a publish costs no extra query, and a change made elsewhere shows soon.
  // Read on the publish's own client: with the caller's transactions holding every pooled connection, a read
  // through the pool would wait for one of them forever. The table's presence is asked first (a statement that
  // cannot fail), so a database migrated before 0009 never aborts the caller's transaction.
  // Kept as JSON text: the worker takes the text, and the text names the compiled schema.
  const cache = new Map<string, { text: string | undefined, until: number }>()
  let present = false
  const stored = async (name: string, client: Queryable): Promise<string | undefined> => {
    const hit = cache.get(name)
    if (hit !== undefined && hit.until > Date.now()) return hit.text
    if (!present) present = (await client.query<{ present: boolean }>(sql.present(), [sql.tableName(db.schema)])).rows[0]?.present === true
    const rows = present ? (await client.query<sql.EventTypeRow>(sql.get(db.schema), [name])).rows : []
    const text = rows[0] === undefined ? undefined : JSON.stringify(rows[0].schema)
    cache.set(name, { text, until: Date.now() + EVENT_TYPE_CACHE_MS })
    return text
  }
  async function checkJson (type: string, json: string, client: Queryable = db.pool, strict = options.strict): Promise<void> {
    const text = codeTexts.get(type) ?? await stored(type, client)
    if (text === undefined) {
      if (strict === true) throw new errors.INVALID_MESSAGE(`type ${type} is not in the event-type catalog (strict)`)
      return
    }
    // Fits anything: no need to ask the worker.
    if (text === '{}' || text === 'true') return
    const { invalid, problem } = await checker.run(type, text, json)
    if (invalid !== undefined) throw invalidSchema(type, invalid)
    if (problem !== undefined) throw new errors.INVALID_MESSAGE(problem)
  }
  const entry = (row: sql.EventTypeRow): EventTypeEntry => ({
    name: row.name, description: row.description, schema: row.schema, deprecated: row.deprecated, source: 'api', updatedAt: row.updated_at.toISOString()
  })
  const fromCode = ([name, schema]: [string, TSchema]): EventTypeEntry => ({ name, description: schema.description ?? '', schema, deprecated: false, source: 'code', updatedAt: null })

  return {
    async list () {
      const { rows } = await db.pool.query<sql.EventTypeRow>(sql.list(db.schema))
      const stored = rows.map(entry).filter((row) => !code.has(row.name))
      return [...[...code].map(fromCode), ...stored].sort((a, b) => a.name.localeCompare(b.name))
    },
    async put (name, input) {
      if (code.has(name)) throw new errors.INVALID_MESSAGE(`event type ${name} is defined in code (defineEventTypes); change it there`)
      const text = bounds(name, input.schema)
      const { invalid } = await checker.run(name, text)
      if (invalid !== undefined) throw invalidSchema(name, invalid)
      const { rows } = await db.pool.query<sql.EventTypeRow>(sql.upsert(db.schema), [name, input.description ?? '', JSON.stringify(input.schema), input.deprecated ?? false])
      cache.delete(name)
      return entry(rows[0] as sql.EventTypeRow)
    },
    async remove (name) {
      const { rowCount } = await db.pool.query(sql.remove(db.schema), [name])
      cache.delete(name)
      if (rowCount === 0) throw new errors.NOT_FOUND(`No event type ${name}${code.has(name) ? ' in the database (it is defined in code)' : ''}`)
    },
    async check (type, data, client = db.pool) {
      await checkJson(type, JSON.stringify(data) ?? 'null', client)
    },
    checkJson,
    async close () {
      await checker.close()
    }
  }
}
