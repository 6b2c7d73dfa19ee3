/**
 * The worker's side of the journal: the row is written (or moved to `processing`) before the handler runs,
 * and its outcome after. Both writes are batched across the jobs running at once (src/journal/write-batcher.ts).
 */
import { inTransaction, type Database } from '../db/database.js'
import { JOURNAL_REPLAY_JOB_PREFIX } from '../shared/constants.js'
import type { WebhookJobData } from '../queue/job-data.js'
import { headersJson, jsonView, pgText } from './event-row.js'
import type { EventStatus } from './event-item.js'
import { WriteBatcher } from './write-batcher.js'
import { doneJobs } from '../sql/webhook_event_done.js'

/** The journal's tables the writer writes, quoted. */
interface Tables { events: string, failures: string, done: string }

export interface StartedEvent {
  id: string
  jobId: string
  attempt: number
  data: WebhookJobData
}

export interface FinishedEvent {
  id: string
  jobId: string
  attempt: number
  status: Extract<EventStatus, 'done' | 'failed' | 'dead'>
  lastError?: string
  errorClass?: string
  /** When the attempt began, for its log row. @defaultValue unknown (null) */
  startedAt?: Date
}

/**
 * `run`: the row exists and says `processing`, the handler may run. The job may not run at all when it has
 * committed its `done` already (`done`: a stall, a crash or a redelivery ran it again) or when the event was
 * replayed onto another job since this one was queued (`overtaken`: a retry left waiting).
 */
export type StartResult = 'run' | 'done' | 'overtaken'

export interface JournalWriter {
  /** Resolves once the row is written, or refused: only on `run` may the handler run. */
  started (event: StartedEvent): Promise<StartResult>
  finished (event: FinishedEvent): Promise<void>
}

/** Journal writes running at once: enough for PostgreSQL to share disk flushes, few enough to leave the pool to handlers. */
const WRITES_IN_FLIGHT = 3

/** The longest error message kept on a row. */
const MAX_ERROR_LENGTH = 2000

/**
 * A new delivery of an id (another dedupe key: the provider sent it again, re-signed) keeps what the last one
 * was in `previous_delivery`, for the diff; a retry or a replay of the same delivery does not. A job of the
 * same delivery that a journal replay has since moved to another job takes nothing when it is a retry (a
 * retry that was waiting): its event runs on the replay's job. A first attempt still takes it (a dead-letter
 * replay's job, or the same delivery accepted again after the dedupe window). A job that has committed its
 * `done` takes nothing: the row says so when the job holds it (read as it is now, not as the statement began),
 * its attempt log when not.
 */
function startSql (events: string, done: string): string {
  return `INSERT INTO ${events} AS e (id, source, provider, event_type, dedupe_key, payload, payload_json, content_type,
      headers, signature, request_id, received_at, status, attempts, job_id, retry_schedule)
    SELECT v.id, v.source, v.provider, v.event_type, v.dedupe_key, v.payload, v.payload_json::jsonb, v.content_type,
      v.headers::jsonb, v.signature, v.request_id, v.received_at, 'processing', v.attempts, v.job_id, v.retry::integer[]
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::text[], $8::text[],
      $9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::int[], $14::text[], $15::text[])
      AS v(id, source, provider, event_type, dedupe_key, payload, payload_json, content_type, headers, signature,
        request_id, received_at, attempts, job_id, retry)
    ON CONFLICT (id) DO UPDATE SET
      status = 'processing', attempts = EXCLUDED.attempts, job_id = EXCLUDED.job_id, updated_at = now(),
      deliveries = e.deliveries + (e.dedupe_key <> EXCLUDED.dedupe_key)::int,
      previous_delivery = CASE WHEN e.dedupe_key <> EXCLUDED.dedupe_key THEN jsonb_build_object(
        'payload', encode(e.payload, 'base64'), 'headers', e.headers, 'signature', e.signature,
        'receivedAt', e.received_at, 'jobId', e.job_id, 'requestId', e.request_id) ELSE e.previous_delivery END,
      dedupe_key = EXCLUDED.dedupe_key, payload = EXCLUDED.payload, payload_json = EXCLUDED.payload_json,
      content_type = EXCLUDED.content_type, headers = EXCLUDED.headers, signature = EXCLUDED.signature,
      request_id = EXCLUDED.request_id, received_at = EXCLUDED.received_at, retry_schedule = EXCLUDED.retry_schedule
    WHERE NOT (e.dedupe_key = EXCLUDED.dedupe_key AND e.job_id IS DISTINCT FROM EXCLUDED.job_id
      AND starts_with(coalesce(e.job_id, ''), '${JOURNAL_REPLAY_JOB_PREFIX}') AND EXCLUDED.attempts > 1)
      AND NOT (e.status = 'done' AND e.job_id = EXCLUDED.job_id)
      AND NOT EXISTS (SELECT 1 FROM ${done} AS d WHERE d.event_id = e.id AND d.job_id = EXCLUDED.job_id)
    RETURNING e.id`
}

/**
 * Only the job that holds the row may finish it: a late outcome of an earlier job never overwrites a replay's,
 * and nothing overwrites a `done`. An outcome of a job that has committed its `done` (another run of it, or this
 * run before a crash cut its status write) is `done`. A failed attempt is logged in the same statement, only for
 * the rows marked; a `done` gets its mark unless its transaction wrote it. As CTEs, so the combined statement
 * can carry them too (PostgreSQL takes data-modifying WITH only at the top level).
 */
function finishCtes (tables: Tables, first = 1): string {
  const $ = (n: number): string => `$${n + first - 1}`
  return `marked AS (UPDATE ${tables.events} AS e SET status = v.status, attempts = v.attempts, last_error = v.last_error,
      error_class = v.error_class, processed_at = CASE WHEN v.status = 'done' THEN now() ELSE e.processed_at END,
      updated_at = now()
    FROM (SELECT u.id, u.job_id, u.attempts, u.started_at, d.event_id IS NOT NULL AS committed,
        CASE WHEN d.event_id IS NULL THEN u.status ELSE 'done' END AS status,
        CASE WHEN d.event_id IS NULL THEN u.last_error END AS last_error, CASE WHEN d.event_id IS NULL THEN u.error_class END AS error_class
      FROM unnest(${$(1)}::text[], ${$(2)}::text[], ${$(3)}::int[], ${$(4)}::text[], ${$(5)}::text[], ${$(6)}::text[], ${$(7)}::timestamptz[])
        AS u(id, job_id, attempts, status, last_error, error_class, started_at)
      LEFT JOIN ${tables.done} AS d ON d.event_id = u.id AND d.job_id = u.job_id) AS v
    WHERE e.id = v.id AND e.job_id = v.job_id AND e.status <> 'done'
    RETURNING v.id, v.job_id, v.attempts, v.status, v.last_error, v.error_class, v.started_at, v.committed),
  failed AS (INSERT INTO ${tables.failures} (event_id, attempt, started_at, status, error_class, error, job_id)
    SELECT id, attempts, started_at, 'failed', error_class, last_error, job_id FROM marked WHERE status <> 'done' RETURNING 1),
  logged AS (INSERT INTO ${tables.done} (event_id, job_id, attempt, started_at)
    SELECT id, job_id, attempts, started_at FROM marked WHERE status = 'done' AND NOT committed ON CONFLICT DO NOTHING RETURNING 1)`
}

function finishSql (tables: Tables): string {
  return `WITH ${finishCtes(tables)} SELECT (SELECT count(*) FROM marked) AS finished`
}

/** Batches of distinct ids, in id order: one statement may not upsert a row twice, and a fixed order cannot deadlock. */
function rounds<T extends { id: string }> (items: T[]): T[][] {
  const sorted = [...items].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  const out: T[][] = []
  let previous: string | undefined
  let n = 0
  for (const item of sorted) {
    // The n-th occurrence of an id goes to the n-th round; sorted input keeps each round sorted.
    n = item.id === previous ? n + 1 : 0
    previous = item.id
    ;(out[n] ??= []).push(item)
  }
  return out
}

function startValues (items: Array<Extract<Write, { kind: 'start' }>>): unknown[] {
  const columns: unknown[][] = Array.from({ length: 15 }, () => [])
  for (const { event: { id, jobId, attempt, data }, withoutView } of items) {
    const payload = Buffer.from(data.payload, 'base64')
    const row = [
      pgText(id), pgText(data.source), pgText(data.provider), pgText(data.eventType), pgText(data.key), payload,
      withoutView === true ? null : jsonView(payload), pgText(data.contentType), headersJson(data.headers), pgText(data.signature),
      pgText(data.requestId), new Date(data.receivedAt), attempt, jobId, `{${data.retry.join(',')}}`
    ]
    row.forEach((value, i) => columns[i]?.push(value))
  }
  return columns
}

/** `withoutView`: the start is written again without its JSON view, which PostgreSQL refused. */
type Write = { kind: 'start', event: StartedEvent, withoutView?: boolean } | { kind: 'finish', event: FinishedEvent }

function finishValues (items: FinishedEvent[]): unknown[] {
  return [
    items.map((i) => i.id), items.map((i) => i.jobId), items.map((i) => i.attempt), items.map((i) => i.status),
    items.map((i) => pgText(i.lastError?.slice(0, MAX_ERROR_LENGTH)) ?? null), items.map((i) => pgText(i.errorClass) ?? null),
    items.map((i) => i.startedAt ?? null)
  ]
}

/**
 * One statement per round for both kinds: the rows to start and the outcomes to record (with their attempts'
 * log rows), as data-modifying CTEs, so a batch costs one round trip and one commit whatever its mix.
 */
function combinedSql (start: string, tables: Tables): string {
  return `WITH started AS (${start}), ${finishCtes(tables, 16)} SELECT id FROM started`
}

/** Runs one write (its rows: the ids started); with `synchronous` false, in a transaction that commits without waiting for the disk. */
async function write (db: Database, synchronous: boolean, text: string, values: unknown[]): Promise<Array<{ id: string }>> {
  if (synchronous) return (await db.pool.query<{ id: string }>(text, values)).rows
  return await inTransaction(db.pool, async (client) => {
    await client.query('SET LOCAL synchronous_commit TO OFF')
    return (await client.query<{ id: string }>(text, values)).rows
  })
}

/**
 * A value PostgreSQL refuses rather than a failure of the write: class 22 (data: JSON it does not take, an
 * encoding) and 54 (a limit: JSON nested deeper than its parser goes).
 */
const refusesValue = (err: unknown): boolean => /^(22|54)/.test(String((err as { code?: unknown } | null)?.code ?? ''))

type Settled = PromiseSettledResult<StartResult>

export function createJournalWriter (db: Database, maxBatch: number, synchronous = true): JournalWriter {
  const tables = { events: db.table('webhook_events'), failures: db.table('webhook_event_failures'), done: db.table('webhook_event_done') }
  const start = startSql(tables.events, tables.done)
  const finish = finishSql(tables)
  const both = combinedSql(start, tables)

  /** The starts the statement did not take: `done` for a job that committed its done, else `overtaken`. */
  async function refusals (refused: StartedEvent[]): Promise<Set<StartedEvent>> {
    const { rows } = await db.pool.query<{ id: string, job_id: string }>(doneJobs(db.schema), [refused.map((e) => e.id), refused.map((e) => e.jobId)])
    const done = new Set(rows.map((row) => `${row.id}\n${row.job_id}`))
    return new Set(refused.filter((e) => done.has(`${e.id}\n${e.jobId}`)))
  }

  /** One statement for a round; starts answer whether they were taken. */
  async function writeRound (round: Write[]): Promise<Map<Write, StartResult>> {
    const starts = round.flatMap((w) => w.kind === 'start' ? [w] : [])
    const finishes = round.flatMap((w) => w.kind === 'finish' ? [w.event] : [])
    const rows = finishes.length === 0
      ? await write(db, synchronous, start, startValues(starts))
      : starts.length === 0
        ? await write(db, synchronous, finish, finishValues(finishes))
        : await write(db, synchronous, both, [...startValues(starts), ...finishValues(finishes)])
    const taken = new Set(rows.map((row) => row.id))
    const refused = new Set<Write>(starts.filter((w) => !taken.has(w.event.id)))
    const done = refused.size === 0 ? new Set() : await refusals([...refused].map((w) => w.event as StartedEvent))
    return new Map(round.map((w) => [w, !refused.has(w) ? 'run' : done.has(w.event) ? 'done' : 'overtaken']))
  }

  /**
   * A round PostgreSQL refuses for one value is written again one write at a time, so the others never notice;
   * a start still refused alone is stored without its JSON view (the bytes are kept). What fails then fails alone.
   */
  async function settle (round: Write[], results: Map<Write, Settled>): Promise<void> {
    try {
      for (const [w, result] of await writeRound(round)) results.set(w, { status: 'fulfilled', value: result })
    } catch (err) {
      const [only] = round
      if (refusesValue(err) && round.length > 1) {
        for (const w of round) await settle([w], results)
      } else if (refusesValue(err) && only?.kind === 'start' && only.withoutView !== true) {
        const plain = { ...only, withoutView: true }
        await settle([plain], results)
        results.set(only, results.get(plain) as Settled)
      } else {
        for (const w of round) results.set(w, { status: 'rejected', reason: err })
      }
    }
  }

  const writes = new WriteBatcher<Write, StartResult>(async (items) => {
    const results = new Map<Write, Settled>()
    // A row is written at most once per statement (PostgreSQL would apply only one of two changes to it).
    for (const round of rounds(items.map((w) => ({ id: w.event.id, write: w })))) await settle(round.map((r) => r.write), results)
    return items.map((w) => results.get(w) as Settled)
  }, maxBatch, WRITES_IN_FLIGHT)
  return {
    started: async (event) => await writes.add({ kind: 'start', event }),
    finished: async (event) => { await writes.add({ kind: 'finish', event }) }
  }
}
