/**
 * The worker's side of the journal: the row is written (or moved to `processing`) before the handler runs,
 * and its outcome after. Both writes are batched across the jobs running at once (src/journal/write-batcher.ts).
 */
import { inTransaction, type Database } from '../db/database.js'
import type { WebhookJobData } from '../queue/job-data.js'
import { headersJson } from '../db/headers-json.js'
import { jsonView } from '../db/json-view.js'
import { pgText } from '../db/pg-text.js'
import type { EventStatus } from '../event-log/event-item.js'
import { WriteBatcher } from './write-batcher.js'
import { doneJobs } from '../sql/webhook_event_done.js'
import * as webhookEvents from '../sql/webhook_events.js'

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
  // One statement per round for both kinds: the rows to start, the outcomes to record (with their attempts' log rows), or both.
  const start = webhookEvents.start(db.schema)
  const finish = webhookEvents.finish(db.schema)
  const both = webhookEvents.startAndFinish(db.schema)

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
