/**
 * The event-type catalog: each type's description and the JSON Schema its data must fit. Types come from the
 * database (`PUT /admin/event-types/:name`) and from code (`defineEventTypes`, TypeBox schemas, which are JSON
 * Schema too); publish checks a message's data against its type's schema, and with `strict` refuses a type the
 * catalog does not hold.
 */
import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type pg from 'pg'
import type { Database } from '../db/database.js'
import { errors } from '../shared/errors.js'
import * as sql from '../sql/event_types.js'
import { EventType } from '../endpoints/endpoint-schemas.js'
import type { PublishOptions, PublishResult } from '../outbox/publish.js'
import type { EventTypeEntry } from './event-type-entry.js'

const Ajv = AjvModule.default
const addFormats = addFormatsModule.default
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

/** A fresh Ajv for the catalog: the formats ajv-formats knows (date-time, email, uri, uuid, …) are checked; any other is a note for consumers. */
const catalogAjv = (): InstanceType<typeof Ajv> => addFormats(new Ajv({ strict: false, logger: false }))

/** Compiles a type's schema, or throws INVALID_SCHEMA naming the type and what ajv found wrong. */
function compileType (ajv: InstanceType<typeof Ajv>, name: string, schema: unknown): ValidateFunction {
  try {
    return ajv.compile(schema as object)
  } catch (err) {
    throw new errors.INVALID_SCHEMA(name, (err as Error).message.replace(/^schema is invalid: /, ''))
  }
}

/** Refuses a type whose schema is no JSON Schema now, with its name, rather than at its first publish. */
export function defineEventTypes<T extends EventTypeMap> (schemas: T): EventTypes<T> {
  for (const [name, schema] of Object.entries(schemas)) compileType(catalogAjv(), name, schema)
  return { schemas, typed: (publish) => async (message, options) => await publish(message, options) }
}

export interface EventTypeCatalog {
  list (): Promise<EventTypeEntry[]>
  put (name: string, input: EventTypeInput): Promise<EventTypeEntry>
  remove (name: string): Promise<void>
  /**
   * Throws 400 `ANVIL_ERR_INVALID_MESSAGE` naming the JSON pointer of the first field that breaks the schema, or
   * `ANVIL_ERR_INVALID_SCHEMA` for a type stored before its schema was checked.
   */
  check (type: string, data: unknown, client?: Queryable): Promise<void>
}

/** `/amount: must be integer`: where in the data, then what is wrong (ajv's words; never the value). */
function describe (error: ErrorObject): string {
  const missing = error.keyword === 'required' ? `/${String((error.params as { missingProperty?: string }).missingProperty)}` : ''
  const extra = error.keyword === 'additionalProperties' ? `/${String((error.params as { additionalProperty?: string }).additionalProperty)}` : ''
  return `data${error.instancePath}${missing}${extra}: ${error.message ?? 'is invalid'}`
}

export function createEventTypeCatalog (db: Database, options: { code?: EventTypeMap, strict?: boolean } = {}): EventTypeCatalog {
  const ajv = catalogAjv()
  // A Map, not the object: a type named `constructor` is not the object's inherited member.
  const code = new Map(Object.entries(options.code ?? {}))
  // Compiled once per schema text: a PUT that changes a schema compiles the new one.
  const compiled = new Map<string, ValidateFunction>()
  const validator = (name: string, schema: unknown): ValidateFunction => {
    const key = JSON.stringify(schema)
    let validate = compiled.get(key)
    if (validate === undefined) {
      validate = compileType(ajv, name, schema)
      compiled.set(key, validate)
    }
    return validate
  }
  // A stored type's schema, kept a few seconds: a publish costs no extra query, and a change made elsewhere shows soon.
  // Read on the publish's own client: with the caller's transactions holding every pooled connection, a read
  // through the pool would wait for one of them forever. The table's presence is asked first (a statement that
  // cannot fail), so a database migrated before 0009 never aborts the caller's transaction.
  const cache = new Map<string, { schema: unknown, until: number }>()
  let present = false
  const stored = async (name: string, client: Queryable): Promise<unknown> => {
    const hit = cache.get(name)
    if (hit !== undefined && hit.until > Date.now()) return hit.schema
    if (!present) present = (await client.query<{ present: boolean }>(sql.present(), [sql.tableName(db.schema)])).rows[0]?.present === true
    const rows = present ? (await client.query<sql.EventTypeRow>(sql.get(db.schema), [name])).rows : []
    cache.set(name, { schema: rows[0]?.schema, until: Date.now() + EVENT_TYPE_CACHE_MS })
    return rows[0]?.schema
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
      validator(name, input.schema)
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
      const schema: unknown = code.get(type) ?? await stored(type, client)
      if (schema === undefined) {
        if (options.strict === true) throw new errors.INVALID_MESSAGE(`type ${type} is not in the event-type catalog (strict)`)
        return
      }
      const validate = validator(type, schema)
      if (!validate(data)) throw new errors.INVALID_MESSAGE(validate.errors?.[0] === undefined ? 'data does not fit its type\'s schema' : describe(validate.errors[0]))
    }
  }
}
