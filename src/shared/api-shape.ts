/**
 * The shape Anvil answers for a table's row, derived from the row's schema, so a column is declared once:
 * keys in camelCase, times as ISO 8601 strings.
 */
import {
  Kind, Type, type Static, type TDate, type TNull, type TObject, type TOptional, type TProperties, type TSchema, type TString, type TUnion
} from '@sinclair/typebox'
import { Nullable } from './schemas.js'

/** `event_types` → `eventTypes`. */
export type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S

type NameOf<K extends string, R> = K extends keyof R ? (R[K] extends string ? R[K] : Camel<K>) : Camel<K>

/** A time answers as a string; a nullable column left out of the answer when null is optional instead. */
type Answered<T extends TSchema, Absent extends boolean> =
  T extends TDate ? TString
    : T extends TUnion<[TDate, TNull]> ? (Absent extends true ? TOptional<TString> : TUnion<[TString, TNull]>)
      : T extends TUnion<[infer X extends TSchema, TNull]> ? (Absent extends true ? TOptional<X> : T)
        : T

export type ApiProperties<P extends TProperties, R, A extends string> = {
  [K in keyof P & string as NameOf<K, R>]: Answered<P[K], K extends A ? true : false>
}

export interface ApiShapeOptions<P extends TProperties, R, A> {
  /** Columns answered under another name than their camelCase one. */
  rename?: R & { readonly [K in keyof P]?: string }
  /** Nullable columns left out of the answer when null. */
  absentWhenNull?: readonly A[]
}

export interface ApiShape<P extends TProperties, R, A extends string> {
  schema: TObject<ApiProperties<P, R, A>>
  /** A row as Anvil answers it; columns the row schema does not name are dropped. */
  from: (row: Static<TObject<P>>) => Static<TObject<ApiProperties<P, R, A>>>
}

const camel = (name: string): string => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())
const Time = (): TString => Type.String({ format: 'date-time' })
const isDate = (schema: TSchema): boolean => schema[Kind] === 'Date'
/** The schema a `Nullable(X)` holds besides null, or undefined for any other schema. */
const nullableOf = (schema: TSchema): TSchema | undefined => {
  const members = schema[Kind] === 'Union' ? (schema.anyOf as TSchema[]) : []
  return members.length === 2 && members[1]?.[Kind] === 'Null' ? members[0] : undefined
}

/** The answer's schema and the mapper from a row, for the row schema given. */
export function apiShape<P extends TProperties, const R = {}, const A extends keyof P & string = never> (
  row: TObject<P>, options: ApiShapeOptions<P, R, A> = {}
): ApiShape<P, R, A> {
  const rename = (options.rename ?? {}) as Record<string, string | undefined>
  const absent = new Set<string>(options.absentWhenNull ?? [])
  const properties: Record<string, TSchema> = {}
  const fields: Array<{ column: string, name: string, absent: boolean }> = []
  for (const [column, schema] of Object.entries(row.properties)) {
    const name = rename[column] ?? camel(column)
    const inner = nullableOf(schema)
    if (absent.has(column) && inner === undefined) throw new TypeError(`${column} is not nullable, so never absent`)
    properties[name] = isDate(schema)
      ? Time()
      : inner === undefined ? schema
        : absent.has(column) ? Type.Optional(isDate(inner) ? Time() : inner)
          : isDate(inner) ? Nullable(Time()) : schema
    fields.push({ column, name, absent: absent.has(column) })
  }
  return {
    schema: Type.Object(properties) as unknown as TObject<ApiProperties<P, R, A>>,
    from: (value) => {
      const answer: Record<string, unknown> = {}
      for (const { column, name, absent } of fields) {
        const cell = (value as Record<string, unknown>)[column]
        if (cell === null && absent) continue
        answer[name] = cell instanceof Date ? cell.toISOString() : cell
      }
      return answer as Static<TObject<ApiProperties<P, R, A>>>
    }
  }
}
