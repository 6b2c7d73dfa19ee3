/** The bulk replays' statements, one each, and a run's row. A run's statements move it only while `running`. */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../shared/schemas.js'
import { qualify } from '../db/qualify.js'

/** A row of `replay_runs` as pg reads it; `filter` is the run's event filter, its times fixed when it started. */
export const ReplayRunRowSchema = Type.Object({
  id: Type.String(),
  filter: Type.Unknown(),
  rate_per_second: Nullable(Type.Integer()),
  matched: Type.Integer(),
  replayed: Type.Integer(),
  state: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('cancelled')]),
  cursor_received_at: Nullable(Type.String()),
  cursor_id: Nullable(Type.String()),
  last_error: Nullable(Type.String())
})
export type ReplayRunRow = Static<typeof ReplayRunRowSchema>

/** A new run: `$1` id, `$2` filter (JSON), `$3` rate or null, `$4` events matched. */
export const insert = (schema: string): string =>
  `INSERT INTO ${qualify(schema, 'replay_runs')} (id, filter, rate_per_second, matched) VALUES ($1, $2, $3, $4)`

/** `$1` id (any text: one that is no run finds nothing). */
export const byId = (schema: string): string => `SELECT * FROM ${qualify(schema, 'replay_runs')} WHERE id::text = $1`

/** A user's cancel: `$1` id. */
export const cancel = (schema: string): string =>
  `UPDATE ${qualify(schema, 'replay_runs')} SET state = 'cancelled', updated_at = now() WHERE id = $1 AND state = 'running'`

/** A run that stopped on its own: `$1` id, `$2` why. */
export const fail = (schema: string): string =>
  `UPDATE ${qualify(schema, 'replay_runs')} SET state = 'cancelled', last_error = $2, updated_at = now() WHERE id = $1 AND state = 'running'`

/** A run not done goes back to running: `$1` id. Returns its row. */
export const resume = (schema: string): string =>
  `UPDATE ${qualify(schema, 'replay_runs')} SET state = 'running', last_error = NULL, updated_at = now() WHERE id = $1 AND state <> 'done' RETURNING *`

/** A page's progress, in the page's transaction: `$1` id, `$2` events replayed, `$3` and `$4` the cursor. */
export const advance = (schema: string): string =>
  `UPDATE ${qualify(schema, 'replay_runs')} SET replayed = replayed + $2, cursor_received_at = $3,
    cursor_id = $4, updated_at = now() WHERE id = $1 AND state = 'running'`

/** `$1` id. */
export const finish = (schema: string): string =>
  `UPDATE ${qualify(schema, 'replay_runs')} SET state = 'done', updated_at = now() WHERE id = $1 AND state = 'running'`

/** Retention: finished runs last updated more than `$1` days ago. */
export const deleteFinished = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'replay_runs')} WHERE state <> 'running' AND updated_at < now() - make_interval(days => $1)`
