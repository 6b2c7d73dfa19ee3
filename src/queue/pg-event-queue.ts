/**
 * The producer of the journal's PostgreSQL-native queue (`journal: { queue: 'postgres' }`): an accepted event
 * is a row of `webhook_event_queue` instead of a BullMQ add, deduplicated by its idempotency key in the same
 * statement. Events accepted together share one statement and one commit (src/queue/micro-batch.ts).
 */
import { randomUUID } from 'node:crypto'
import { openDatabase, type Database, type DatabaseInput } from '../db/database.js'
import { headersJson } from '../db/headers-json.js'
import { pgText } from '../db/pg-text.js'
import { EVENT_JOB_PREFIX } from '../shared/constants.js'
import { errors } from '../shared/errors.js'
import { within } from '../time/within.js'
import { journalIdOf } from '../journal/journal-id-of.js'
import * as sql from '../sql/webhook-event-queue.js'
import { MicroBatch } from './micro-batch.js'
import type { QueueSettings } from './queue-settings.js'
import type { EnqueueInput, EnqueueResult } from './webhook-queue.js'

/** Events one enqueue statement carries at most. */
const MAX_BATCH = 64

/** A queue row's values, ENQUEUED's order (src/sql/webhook-event-queue.ts). */
export interface QueuedValues {
  job_id: string
  dedupe_key: string
  event_id: string
  received_at: Date
  source: string
  provider: string | null
  event_type: string | null
  provider_event_id: string | null
  content_type: string | null
  /** JSON text. */
  headers: string
  signature: string | null
  request_id: string | null
  /** Its delays, ms. */
  retry_schedule: readonly number[]
  replay_of: string | null
  payload: Buffer
}

/** The statement's values for `rows`: one array a column. */
export function queuedValues (rows: readonly QueuedValues[]): unknown[] {
  return sql.ENQUEUED.map((name) => rows.map((row) => name === 'retry_schedule' ? `{${row.retry_schedule.join(',')}}` : row[name]))
}

interface Pending { row: QueuedValues, windowMs: number }

export class PgEventQueue {
  readonly db: Database
  readonly settings: QueueSettings
  private readonly batch: MicroBatch<Pending, string>

  constructor (database: DatabaseInput, settings: QueueSettings, schema?: string, private readonly timeoutMs = 5000) {
    this.db = openDatabase(database, { schema })
    this.settings = settings
    this.batch = new MicroBatch(async (items) => await this.write(items), MAX_BATCH)
  }

  /** One statement for the batch; the keys it found taken are answered with the job that holds them. */
  private async write (items: Pending[]): Promise<string[]> {
    const { schema, pool } = this.db
    const rows = items.map((item) => item.row)
    let added: Array<{ job_id: string, dedupe_key: string }>
    try {
      added = (await within(pool.query<{ job_id: string, dedupe_key: string }>(
        { text: sql.enqueue(schema), values: [...queuedValues(rows), this.settings.dedupeWindowMs] }), this.timeoutMs, () => {
        throw new Error(`the enqueue took longer than ${this.timeoutMs} ms`)
      })).rows
    } catch (err) {
      throw new errors.DATABASE_UNAVAILABLE('the journal queue did not take the event', { cause: err })
    }
    const jobs = new Map(added.map((row) => [row.dedupe_key, row.job_id]))
    const taken = rows.filter((row) => jobs.get(row.dedupe_key) !== row.job_id)
    if (taken.length > 0) {
      const found = await pool.query<{ dedupe_key: string, job_id: string | null }>(sql.pendingJobs(schema),
        [taken.map((row) => row.event_id), taken.map((row) => row.dedupe_key), this.settings.dedupeWindowMs, taken.map((row) => row.received_at)])
      for (const row of found.rows) if (!jobs.has(row.dedupe_key) && row.job_id !== null) jobs.set(row.dedupe_key, row.job_id)
    }
    return rows.map((row) => jobs.get(row.dedupe_key) ?? row.job_id)
  }

  async enqueue (input: EnqueueInput): Promise<EnqueueResult> {
    const jobId = EVENT_JOB_PREFIX + randomUUID()
    const row: QueuedValues = {
      job_id: jobId,
      dedupe_key: pgText(input.key) ?? '',
      event_id: pgText(journalIdOf(input)) ?? '',
      received_at: new Date(input.receivedAt),
      source: pgText(input.source) ?? '',
      provider: pgText(input.provider),
      event_type: pgText(input.eventType),
      provider_event_id: pgText(input.eventId),
      content_type: pgText(input.contentType),
      headers: headersJson(input.headers),
      signature: pgText(input.signature),
      request_id: pgText(input.requestId),
      retry_schedule: this.settings.retrySchedule,
      replay_of: null,
      payload: input.payload
    }
    const id = await this.batch.add({ row, windowMs: this.settings.dedupeWindowMs })
    return { jobId: id, replayed: id !== jobId }
  }

  /** True when PostgreSQL answers within `timeoutMs`. */
  async ping (timeoutMs = this.timeoutMs): Promise<boolean> {
    return await within(this.db.pool.query(sql.reachable(this.db.schema)).then(() => true, () => false), timeoutMs, () => false)
  }

  async close (): Promise<void> {
    await this.db.close()
  }
}

