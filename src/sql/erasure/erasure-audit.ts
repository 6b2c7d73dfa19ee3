/** The audit of erasures (`erasure_audit`, migration 0025), one statement per export. */
import { Type, type Static } from '@sinclair/typebox'
import { qualify } from '../../db/qualify.js'

/** A row of `erasure_audit` as pg reads it (bigint ids as text). */
export const ErasureAuditRowSchema = Type.Object({
  id: Type.String(),
  action: Type.Union([Type.Literal('subject'), Type.Literal('tenant')]),
  target: Type.String(),
  actor: Type.String(),
  at: Type.Date(),
  counts: Type.Record(Type.String(), Type.Integer())
})
export type ErasureAuditRow = Static<typeof ErasureAuditRowSchema>

/** `$1` action, `$2` target, `$3` actor, `$4` counts (JSON). */
export const insert = (schema: string): string =>
  `INSERT INTO ${qualify(schema, 'erasure_audit')} (action, target, actor, counts) VALUES ($1, $2, $3, $4) RETURNING *`

/** Newest first: `$1` before this id or null, `$2` limit. */
export const page = (schema: string): string =>
  `SELECT * FROM ${qualify(schema, 'erasure_audit')} WHERE ($1::bigint IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`
