/**
 * The effects handlers applied once (`event.once()`), one row a key; they go with their event. The claim and
 * the result take their values inlined as escaped literals: they travel in one round trip with the statements
 * around them (the simple protocol takes no parameters; the claim is EXECUTEd, its plan cached).
 */
import pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import { qualify } from '../db/qualify.js'
import type { SessionStatement } from '../db/session-statement.js'

/** A row of `webhook_effects` as pg reads it: `result` is the handler's result, parsed (null until stored). */
export const WebhookEffectRowSchema = Type.Object({
  key: Type.String(),
  event_id: Type.String(),
  action: Type.String(),
  result: Type.Unknown(),
  created_at: Type.Date()
})
export type WebhookEffectRow = Static<typeof WebhookEffectRowSchema>

/**
 * Claims `$1` (the key) for event `$2`'s action `$3`; returns the key when this transaction claimed it, no row when
 * it was taken. PREPAREd on the connection (src/db/session-statement.ts), run in one round trip with its SAVEPOINT.
 */
export const claim = (schema: string): SessionStatement => ({
  name: `anvil_claim_${Buffer.from(schema).toString('hex')}`,
  types: ['text', 'text', 'text'],
  text: `INSERT INTO ${qualify(schema, 'webhook_effects')} (key, event_id, action) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING RETURNING key`
})

/** The stored result of `key`. */
export const resultOf = (schema: string, key: string): string =>
  `SELECT result FROM ${qualify(schema, 'webhook_effects')} WHERE key = ${pg.escapeLiteral(key)}`

/** Stores the claimed `key`'s result, as JSON text. */
export const storeResult = (schema: string, key: string, json: string): string =>
  `UPDATE ${qualify(schema, 'webhook_effects')} SET result = ${pg.escapeLiteral(json)}::jsonb WHERE key = ${pg.escapeLiteral(key)}`

/** An event's effects, oldest first: `$1` event. */
export const ofEvent = (schema: string): string =>
  `SELECT action, key, result, created_at FROM ${qualify(schema, 'webhook_effects')} WHERE event_id = $1 ORDER BY created_at, key`

/** One retention batch: effects created before `$1`, `$2` the batch (the FOR UPDATE waits for no transaction). */
export const deleteCreatedBefore = (schema: string): string => {
  const effects = qualify(schema, 'webhook_effects')
  return `DELETE FROM ${effects} WHERE key = ANY (ARRAY(SELECT key FROM ${effects} WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED))`
}
