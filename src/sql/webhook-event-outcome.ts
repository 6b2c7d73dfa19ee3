/**
 * An attempt's outcome, written once: the delivery's row with its final status (`done`, `failed`, `dead`),
 * inserted, or updated when an earlier attempt or a replay wrote it. A `done` row is the job's mark: the row
 * refuses a second outcome of a job that committed its `done`, and any outcome of a job a replay moved it from.
 * A failed attempt is logged in the same statement. Many outcomes go in one statement (`$1`… arrays, one value
 * an event); the handler's own transaction sends one that raises when refused, so its transaction rolls back.
 * Both run as prepared statements, planned once per connection: inlined, the statement cost about 300 µs more
 * of PostgreSQL's CPU per event (bench/journal-statements.mjs).
 */
import { DEAD_JOB_PREFIX, REPLAY_JOB_PREFIX } from '../shared/constants.js'
import { qualify } from '../db/qualify.js'
import { sqlLiteral, type SessionStatement } from '../db/session-statement.js'

/** An outcome's values, one per column, as the worker has them. */
export interface OutcomeRow {
  id: string
  received_at: Date
  source: string
  provider: string | null
  event_type: string | null
  dedupe_key: string
  status: 'done' | 'failed' | 'dead'
  attempts: number
  job_id: string
  started_at: Date | null
  last_error: string | null
  error_class: string | null
  retry_schedule: readonly number[]
  content_type: string | null
  /** JSON text that jsonb takes. */
  headers: string
  signature: string | null
  request_id: string | null
  payload: Buffer
}

/** The columns in order, with the type each is sent as (arrays and JSON as text, cast after). */
const COLUMNS: ReadonlyArray<readonly [keyof OutcomeRow, string, string?]> = [
  ['id', 'text'], ['received_at', 'timestamptz'], ['source', 'text'], ['provider', 'text'], ['event_type', 'text'],
  ['dedupe_key', 'text'], ['status', 'text'], ['attempts', 'int'], ['job_id', 'text'], ['started_at', 'timestamptz'],
  ['last_error', 'text'], ['error_class', 'text'], ['retry_schedule', 'text', 'int[]'], ['content_type', 'text'],
  ['headers', 'text', 'jsonb'], ['signature', 'text'], ['request_id', 'text'], ['payload', 'bytea']
]
const NAMES = COLUMNS.map(([name]) => name).join(', ')
const CAST = COLUMNS.map(([name, , cast]) => cast === undefined ? `v.${name}` : `v.${name}::${cast}`).join(', ')

/** The SQL code of the error the inlined write raises when the row refuses it. */
export const REFUSED = 'AJ001'

/**
 * Whether job `job` may write the outcome of row `e` (the same delivery): the row's own job, or a replay of its
 * dead letter (`r_d_<job>`), unless that job has committed its `done`. Another job was moved from by a replay.
 */
export const takes = (e: string, job: string): string =>
  `(${e}.job_id IS NULL OR ${e}.job_id = ${job} OR ${job} = '${REPLAY_JOB_PREFIX}${DEAD_JOB_PREFIX}' || ${e}.job_id)
    AND NOT (${e}.status = 'done' AND ${e}.job_id = ${job})`

/**
 * The CTEs `written` (the rows taken) and `failed` (their attempts' log rows), from the values in `source` aliased
 * `v`; with `queued` (the journal's PostgreSQL queue), `gone`: the queue rows of the jobs written `done` or `dead`,
 * deleted in the same statement (their outcome and their row's end commit together, with no statement of their own).
 */
function recording (schema: string, source: string, queued = false): string {
  return `written AS (INSERT INTO ${qualify(schema, 'webhook_events')} AS e (${NAMES}, processed_at)
      SELECT ${CAST}, CASE WHEN v.status = 'done' THEN now() END FROM ${source}
    ON CONFLICT (id, received_at) DO UPDATE SET status = EXCLUDED.status, attempts = EXCLUDED.attempts, job_id = EXCLUDED.job_id,
      started_at = EXCLUDED.started_at, processed_at = coalesce(EXCLUDED.processed_at, e.processed_at),
      last_error = EXCLUDED.last_error, error_class = EXCLUDED.error_class, updated_at = now()
    WHERE ${takes('e', 'EXCLUDED.job_id')}
    RETURNING e.id, e.received_at, e.status, e.attempts, e.job_id, e.started_at, e.last_error, e.error_class),
  failed AS (INSERT INTO ${qualify(schema, 'webhook_event_failures')} (event_id, event_received_at, attempt, started_at, status, error_class, error, job_id)
    SELECT id, received_at, attempts, started_at, 'failed', error_class, last_error, job_id FROM written WHERE status <> 'done' RETURNING 1)${queued
    ? `,
  gone AS (DELETE FROM ${qualify(schema, 'webhook_event_queue')} WHERE job_id IN (SELECT job_id FROM written WHERE status IN ('done', 'dead')))`
    : ''}`
}

/** The `unnest` of `$1`…`$18`, arrays of one value an event. */
const UNNESTED = `unnest(${COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')}) AS v(${NAMES})`

/** Outcomes in one statement, `$1`…`$18` arrays of one value an event (the columns' order); the rows taken come back. */
export const record = (schema: string, queued = false): string =>
  `WITH ${recording(schema, UNNESTED, queued)}
  SELECT id, received_at FROM written`

/** A prepared statement's name for `text`: its schema's statements (and the queue's variants) differ. */
export const prepared = (kind: string, schema: string, queued = false): string => `anvil_${kind}${queued ? '_q' : ''}_${Buffer.from(schema).toString('hex')}`

/** The values of `record` for these outcomes. */
export function recordValues (rows: readonly OutcomeRow[]): unknown[] {
  return COLUMNS.map(([name]) => rows.map((row) => name === 'retry_schedule' ? `{${row.retry_schedule.join(',')}}` : row[name]))
}

/** Raises `REFUSED` when `written` took no row. */
const refusedIfNone = (schema: string): string =>
  `SELECT ${qualify(schema, 'journal_refused')}() FROM (SELECT count(*) AS n FROM written) AS c WHERE c.n = 0`

/** One outcome, `$1`… as `record`'s with one value each; raises `REFUSED` when the row refuses it. */
export const recordChecked = (schema: string, queued = false): string =>
  `WITH ${recording(schema, UNNESTED, queued)}
  ${refusedIfNone(schema)}`

/**
 * The end of a handler's transaction, PREPAREd on its connection (src/db/session-statement.ts) so that it goes in
 * one round trip with the COMMIT: the result of a `once` effect (`$19` its key, `$20` its JSON text; NULL for none)
 * and the event's row, `$1`…`$18` one value each (the columns' order). Raises `REFUSED` when the row refuses it.
 * One key, by equality: a plan cached while the table was small still reads its unique index.
 */
export const finishOne = (schema: string, queued = false): SessionStatement => ({
  name: prepared('finish', schema, queued),
  types: [...COLUMNS.map(([, type]) => type), 'text', 'text'],
  text: `WITH stored AS (UPDATE ${qualify(schema, 'webhook_effects')} SET result = $${COLUMNS.length + 2}::jsonb WHERE key = $${COLUMNS.length + 1}),
    ${recording(schema, `(SELECT ${COLUMNS.map(([name], i) => `$${i + 1} AS ${name}`).join(', ')}) AS v`, queued)}
  ${refusedIfNone(schema)}`
})

/** `finishOne`'s values: the row's, then an effect's key and result (or NULLs). */
export function finishValues (row: OutcomeRow, result?: { key: string, json: string }): unknown[] {
  return [...recordValues([row]).map((column) => (column as unknown[])[0]), result?.key ?? null, result?.json ?? null]
}

/** An effect of `once()` recorded at a group's commit: its claim and its result (JSON text) together. */
export interface EffectRow { key: string, event_id: string, action: string, result: string }

/** A column's values as an array literal, cast (values inlined: the group's statement is planned once per group). */
function arrayOf (values: readonly unknown[], type: string): string {
  return `ARRAY[${values.map(sqlLiteral).join(', ')}]::${type}[]`
}

/**
 * A group's one statement: its events' rows (as `record`) and their effects' claims with their results, values
 * inlined, so that it goes in one round trip with the group's COMMIT. Raises `REFUSED` when a row is refused or
 * an effect's key is taken (another run recorded it first): the group then writes its events one at a time.
 */
export function recordGroup (schema: string, rows: readonly OutcomeRow[], effects: readonly EffectRow[], queued = false): string {
  const values = recordValues(rows) as unknown[][]
  const source = `unnest(${COLUMNS.map(([, type], i) => arrayOf(values[i] ?? [], type)).join(', ')}) AS v(${NAMES})`
  const claims = `fx AS (INSERT INTO ${qualify(schema, 'webhook_effects')} (key, event_id, action, result)
    SELECT key, event_id, action, result::jsonb FROM unnest(${arrayOf(effects.map((e) => e.key), 'text')}, ${arrayOf(effects.map((e) => e.event_id), 'text')},
      ${arrayOf(effects.map((e) => e.action), 'text')}, ${arrayOf(effects.map((e) => e.result), 'text')}) AS f(key, event_id, action, result)
    ON CONFLICT (key) DO NOTHING RETURNING 1)`
  return `WITH ${claims}, ${recording(schema, source, queued)}
  SELECT ${qualify(schema, 'journal_refused')}() FROM (SELECT (SELECT count(*) FROM fx) AS e, (SELECT count(*) FROM written) AS w) AS c
    WHERE c.e < ${effects.length} OR c.w < ${rows.length}`
}

/** Claims `effects` with their results; the keys taken come back (one missing: another run recorded it first). */
export function claimAll (schema: string, effects: readonly EffectRow[]): string {
  return `INSERT INTO ${qualify(schema, 'webhook_effects')} (key, event_id, action, result)
    SELECT key, event_id, action, result::jsonb FROM unnest(${arrayOf(effects.map((e) => e.key), 'text')}, ${arrayOf(effects.map((e) => e.event_id), 'text')},
      ${arrayOf(effects.map((e) => e.action), 'text')}, ${arrayOf(effects.map((e) => e.result), 'text')}) AS f(key, event_id, action, result)
    ON CONFLICT (key) DO NOTHING RETURNING key`
}

/** Before a job that may have run already (a retry, a restart) runs its handler: `$1` id, `$2` received at, `$3` job. */
export const admits = (schema: string): string =>
  `SELECT e.status = 'done' AND e.job_id = $3 AS done, ${takes('e', '$3')} AS takes
    FROM ${qualify(schema, 'webhook_events')} AS e WHERE e.id = $1 AND e.received_at = $2`
