/** The `event_types` table (migration 0009): its row, and one statement per plan. */
import { Type, type Static } from '@sinclair/typebox'

/** The table's qualified name, for `present`. */
export const tableName = (schema: string): string => `"${schema}".event_types`
const table = tableName

/** $1 the qualified name: whether migration 0009 has made the table (never an error, so a transaction goes on). */
export const present = (): string => 'SELECT to_regclass($1) IS NOT NULL AS present'

export const EventTypeRowSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  schema: Type.Unknown(),
  deprecated: Type.Boolean(),
  created_at: Type.Unsafe<Date>({}),
  updated_at: Type.Unsafe<Date>({})
})
export type EventTypeRow = Static<typeof EventTypeRowSchema>

/** $1 name, $2 description, $3 schema (JSON text), $4 deprecated: inserted, or replaced in place. */
export const upsert = (schema: string): string => `INSERT INTO ${table(schema)} (name, description, schema, deprecated)
  VALUES ($1, $2, $3::jsonb, $4)
  ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, schema = EXCLUDED.schema,
    deprecated = EXCLUDED.deprecated, updated_at = now()
  RETURNING *`

export const list = (schema: string): string => `SELECT * FROM ${table(schema)} ORDER BY name`

/** $1 name. */
export const get = (schema: string): string => `SELECT * FROM ${table(schema)} WHERE name = $1`

/** $1 name. */
export const remove = (schema: string): string => `DELETE FROM ${table(schema)} WHERE name = $1 RETURNING name`
