/**
 * The worker's side of the journal: each attempt's outcome written once, as the delivery's row with its final
 * status. Outcomes of handlers that began no transaction are batched across the jobs running at once
 * (src/journal/write-batcher.ts); a handler's transaction writes its own (src/journal/effect-scope.ts).
 */
import { inTransaction, type Database } from '../db/database.js'
import type pg from 'pg'
import type { WebhookJobData } from '../queue/job-data.js'
import { headersJson } from '../db/headers-json.js'
import { pgText } from '../db/pg-text.js'
import type { EventStatus } from '../event-log/event-item.js'
import { WriteBatcher } from './write-batcher.js'
import { admits, prepared, record, recordValues, type OutcomeRow } from '../sql/webhook-event-outcome.js'

export interface FinishedEvent {
  id: string
  jobId: string
  attempt: number
  status: Extract<EventStatus, 'done' | 'failed' | 'dead'>
  lastError?: string
  errorClass?: string
  /** When the attempt began, for its log row. @defaultValue unknown (null) */
  startedAt?: Date
  /** The job's data: the row is written from it when it does not exist yet. */
  data: WebhookJobData
}

/**
 * `run`: the handler may run. The job may not run at all when it has committed its `done` already (`done`: a
 * stall, a crash or a redelivery ran it again) or when the event was replayed onto another job since this one
 * was queued (`overtaken`: a retry left waiting).
 */
export type StartResult = 'run' | 'done' | 'overtaken'

/** `written`: the row says this outcome; `refused`: the row belongs to another job, or this one is done. */
export type FinishResult = 'written' | 'refused'

export interface JournalWriter {
  /** Whether a job that may have run before (a retry, a restart) may run: asks the row, once. */
  admits: (event: { id: string, jobId: string, data: WebhookJobData }) => Promise<StartResult>
  /** Writes the outcome, batched with other jobs'. */
  finished: (event: FinishedEvent) => Promise<FinishResult>
}

/** Journal writes running at once: enough for PostgreSQL to share disk flushes, few enough to leave the pool to handlers. */
const WRITES_IN_FLIGHT = 3

/** The longest error message kept on a row. */
const MAX_ERROR_LENGTH = 2000

/** The row an outcome writes. */
export function outcomeRow (event: FinishedEvent): OutcomeRow {
  const { data } = event
  return {
    id: pgText(event.id) ?? '',
    received_at: new Date(data.receivedAt),
    source: pgText(data.source) ?? '',
    provider: pgText(data.provider),
    event_type: pgText(data.eventType),
    dedupe_key: pgText(data.key) ?? '',
    status: event.status,
    attempts: event.attempt,
    job_id: event.jobId,
    started_at: event.startedAt ?? null,
    last_error: pgText(event.lastError?.slice(0, MAX_ERROR_LENGTH)),
    error_class: pgText(event.errorClass),
    retry_schedule: data.retry,
    content_type: pgText(data.contentType),
    headers: headersJson(data.headers),
    signature: pgText(data.signature),
    request_id: pgText(data.requestId),
    payload: Buffer.from(data.payload, 'base64')
  }
}

/** A delivery's key: its id and when it was received. */
const keyOf = (id: string, receivedAt: Date | number): string => `${id}\n${new Date(receivedAt).getTime()}`

/** Batches of distinct deliveries: one statement may not upsert a row twice. */
function rounds (items: FinishedEvent[]): FinishedEvent[][] {
  const out: FinishedEvent[][] = []
  const seen = new Map<string, number>()
  for (const item of items) {
    const key = keyOf(item.id, item.data.receivedAt)
    const n = seen.get(key) ?? 0
    seen.set(key, n + 1)
    ;(out[n] ??= []).push(item)
  }
  return out
}

/**
 * A value PostgreSQL refuses rather than a failure of the write: class 22 (data: an encoding) and 54 (a limit).
 */
const refusesValue = (err: unknown): boolean => /^(22|54)/.test(String((err as { code?: unknown } | null)?.code ?? ''))

type Settled = PromiseSettledResult<FinishResult>

/** Runs one write; with `synchronous` false, in a transaction that commits without waiting for the disk. */
async function write<R extends object> (db: Database, synchronous: boolean, query: pg.QueryConfig): Promise<R[]> {
  if (synchronous) return (await db.pool.query<R & pg.QueryResultRow>(query)).rows
  return await inTransaction(db.pool, async (client) => {
    await client.query('SET LOCAL synchronous_commit TO OFF')
    return (await client.query<R & pg.QueryResultRow>(query)).rows
  })
}

/** `queued`: the journal's PostgreSQL queue; a job's queue row goes in the statement that writes it `done` or `dead`. */
export function createJournalWriter (db: Database, maxBatch: number, synchronous = true, queued = false): JournalWriter {
  const statement = { name: prepared('record', db.schema, queued), text: record(db.schema, queued) }

  async function writeRound (round: FinishedEvent[]): Promise<Map<FinishedEvent, FinishResult>> {
    const rows = await write<{ id: string, received_at: Date }>(db, synchronous, { ...statement, values: recordValues(round.map(outcomeRow)) })
    const taken = new Set(rows.map((row) => keyOf(row.id, row.received_at)))
    return new Map(round.map((e) => [e, taken.has(keyOf(outcomeRow(e).id, e.data.receivedAt)) ? 'written' : 'refused']))
  }

  /** A round PostgreSQL refuses for one value is written again one outcome at a time, so the others never notice. */
  async function settle (round: FinishedEvent[], results: Map<FinishedEvent, Settled>): Promise<void> {
    try {
      for (const [e, result] of await writeRound(round)) results.set(e, { status: 'fulfilled', value: result })
    } catch (err) {
      if (refusesValue(err) && round.length > 1) {
        for (const e of round) await settle([e], results)
      } else {
        for (const e of round) results.set(e, { status: 'rejected', reason: err })
      }
    }
  }

  const writes = new WriteBatcher<FinishedEvent, FinishResult>(async (items) => {
    const results = new Map<FinishedEvent, Settled>()
    for (const round of rounds(items)) await settle(round, results)
    return items.map((e) => results.get(e) as Settled)
  }, maxBatch, WRITES_IN_FLIGHT)

  return {
    async admits ({ id, jobId, data }) {
      const { rows } = await db.pool.query<{ done: boolean, takes: boolean }>(admits(db.schema), [pgText(id), new Date(data.receivedAt), jobId])
      const row = rows[0]
      return row === undefined || row.takes ? 'run' : row.done ? 'done' : 'overtaken'
    },
    finished: async (event) => await writes.add(event)
  }
}
