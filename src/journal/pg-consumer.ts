/**
 * The consumer of the journal's PostgreSQL-native queue (`journal: { queue: 'postgres' }`): claims due rows of
 * `webhook_event_queue` in batches (FOR UPDATE SKIP LOCKED, each leased), woken by NOTIFY with a poll behind it,
 * and runs each as the BullMQ worker runs a job (src/journal/run-journaled.ts): the event's journal row, written
 * once with the outcome, is its done mark, so a row run again after a crash finds it and skips its handler.
 * A failed attempt waits for its retry on the row (src/queue/retry.ts); the last one leaves the event `dead`.
 */
import type pg from 'pg'
import { STALLED_MESSAGE } from '../shared/constants.js'
import { labelsOf, publish } from '../shared/diagnostics.js'
import { errorMessageOf } from '../shared/error-message-of.js'
import type { AnvilLogger } from '../shared/logger.js'
import type { WebhookJobData } from '../queue/job-data.js'
import { attemptsFor, delayAfter } from '../queue/retry.js'
import { toEvent, type WebhookEvent } from '../worker/webhook-event.js'
import * as sql from '../sql/webhook-event-queue.js'
import type { QueueRow } from '../sql/webhook-event-queue.js'
import { runJournaled } from './run-journaled.js'
import { MicroBatch } from '../queue/micro-batch.js'
import type { Journal } from './journal.js'

export interface PgConsumerOptions {
  concurrency: number
  /** How long a claim holds a row; renewed while its handler runs. A dead worker's rows run again after it. */
  leaseMs: number
  /** How often the queue is read when no NOTIFY came (a lost connection, a retry coming due). */
  pollMs: number
  /** A row begun this many times more than it finished (its workers died) is `dead`. */
  maxStalledCount: number
  log: AnvilLogger
}

export interface PgConsumer {
  start: () => Promise<void>
  /** Stops claiming and waits for the running handlers up to `timeoutMs`; their rows run again elsewhere after. */
  close: (timeoutMs: number) => Promise<void>
  /** Handlers running now. */
  readonly active: number
}

/** Rows one claim takes at most. */
const MAX_CLAIM = 50

/** The job the ingress made, from its row. */
export function jobDataOf (row: QueueRow): WebhookJobData {
  return {
    v: 1,
    source: row.source,
    key: row.dedupe_key,
    payload: row.payload.toString('base64'),
    contentType: row.content_type ?? undefined,
    signature: row.signature ?? undefined,
    eventId: row.provider_event_id ?? undefined,
    eventType: row.event_type ?? undefined,
    provider: row.provider ?? undefined,
    headers: row.headers,
    receivedAt: row.received_at.getTime(),
    retry: row.retry_schedule,
    replayOf: row.replay_of ?? undefined,
    requestId: row.request_id ?? undefined
  }
}

const gaveUp = (err: unknown): boolean => (err as Error | null)?.name === 'UnrecoverableError'

export function createPgConsumer (journal: Journal, handler: (event: WebhookEvent) => unknown, options: PgConsumerOptions): PgConsumer {
  const { db } = journal
  const { schema, pool } = db
  const { log } = options
  const running = new Map<string, Promise<void>>()
  let closing = false
  let loop: Promise<void> | undefined
  let listener: pg.PoolClient | undefined
  let renewer: NodeJS.Timeout | undefined
  /** Set by a NOTIFY, a finished handler or a retry coming due; the loop waits on it. */
  let nudged = false
  let wake: (() => void) | undefined
  const nudge = (): void => { nudged = true; wake?.() }

  async function listen (): Promise<void> {
    if (closing) return
    try {
      const client = await pool.connect()
      client.on('notification', nudge)
      client.on('error', () => {
        client.release(true)
        if (listener === client) listener = undefined
        // The poll carries on meanwhile; the listener comes back on the next try.
        if (!closing) setTimeout(() => { void listen() }, options.pollMs).unref()
      })
      await client.query(`LISTEN ${sql.channelOf(schema)}`)
      listener = client
    } catch (err) {
      log.warn({ err: errorMessageOf(err) }, 'anvil worker: journal queue LISTEN failed, polling')
      if (!closing) setTimeout(() => { void listen() }, options.pollMs).unref()
    }
  }

  async function waitForWork (): Promise<void> {
    if (nudged || closing) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.pollMs)
      wake = () => { clearTimeout(timer); resolve() }
    })
    wake = undefined
  }

  // The rows of jobs that ended in the same turn go in one DELETE: one commit for them all, not one each.
  const removals = new MicroBatch<string, void>(async (jobIds) => {
    await pool.query(sql.remove(schema), [jobIds])
    return jobIds.map(() => undefined)
  }, MAX_CLAIM)
  async function removeRow (jobId: string): Promise<void> {
    await removals.add(jobId).catch((err: Error) => log.warn({ jobId, err: err.message }, 'anvil worker: journal queue write failed'))
  }

  async function settle (jobId: string, statement: string, values: unknown[]): Promise<void> {
    // A row left behind (the database away) runs again once its lease passes, and finds its outcome written.
    await pool.query(statement, values).catch((err: Error) => log.warn({ jobId, err: err.message }, 'anvil worker: journal queue write failed'))
  }

  async function run (row: QueueRow): Promise<void> {
    const jobId = row.job_id
    const data = jobDataOf(row)
    const attempt = row.attempts_made + 1
    const maxAttempts = attemptsFor(row.retry_schedule)
    const restarted = row.attempts_started > attempt
    const requestId = data.requestId
    if (row.attempts_started - attempt > options.maxStalledCount) {
      log.warn({ jobId, requestId, attempt }, 'anvil worker: stalled job failed')
      await journal.finished({ id: row.event_id, jobId, attempt, status: 'dead', lastError: STALLED_MESSAGE, errorClass: 'stalled', data })
      await removeRow(jobId)
      return
    }
    log.debug?.({ jobId, requestId, attempt }, 'anvil worker: job started')
    const startedAt = Date.now()
    try {
      const outcome = await runJournaled(journal, handler, toEvent(jobId, data, attempt, maxAttempts), { jobId, data, attempt, maxAttempts, restarted })
      // A run's row went with its outcome `done`, in the statement that wrote it (src/sql/webhook-event-outcome.ts).
      if (outcome !== 'ran') {
        await removeRow(jobId)
        log.info({ jobId, requestId, attempt }, outcome === 'done'
          ? 'anvil worker: run skipped, this job has already committed its event done'
          : 'anvil worker: retry skipped, a journal replay runs this event on another job')
        return
      }
      log.info({ jobId, requestId, attempt, durationMs: Date.now() - startedAt }, 'anvil worker: job completed')
      publish('processed', () => ({ ...labelsOf(data), jobId, attempt, receivedToHandledMs: Date.now() - data.receivedAt }))
    } catch (err) {
      log.warn({ jobId, requestId, attempt, err: errorMessageOf(err) }, 'anvil worker: attempt failed')
      publish('failed', () => ({ ...labelsOf(data), jobId, attempt }))
      const delay = attempt >= maxAttempts || gaveUp(err) ? -1 : delayAfter(row.retry_schedule, attempt)
      if (delay < 0) {
        await removeRow(jobId)
        log.warn({ jobId, requestId }, 'anvil worker: event dead in the journal')
        return
      }
      await settle(jobId, sql.retryLater(schema), [jobId, attempt, delay])
      // This worker looks again when the retry is due, whatever the poll.
      setTimeout(nudge, delay).unref()
    }
  }

  async function claimLoop (): Promise<void> {
    while (!closing) {
      const free = options.concurrency - running.size
      if (free <= 0) {
        await waitForWork()
        nudged = false
        continue
      }
      nudged = false
      let rows: QueueRow[]
      try {
        rows = (await pool.query<QueueRow>(sql.claim(schema), [Math.min(free, MAX_CLAIM), options.leaseMs])).rows
      } catch (err) {
        log.warn({ err: errorMessageOf(err) }, 'anvil worker: journal queue claim failed')
        await new Promise((resolve) => setTimeout(resolve, options.pollMs))
        continue
      }
      for (const row of rows) {
        const job = run(row).catch((err: Error) => log.error({ jobId: row.job_id, err: err.message }, 'anvil worker: job failed to settle'))
          .finally(() => { running.delete(row.job_id); nudge() })
        running.set(row.job_id, job)
      }
      // A full claim may have left more: claim again at once. Otherwise wait for a NOTIFY, a free slot or the poll.
      if (rows.length < Math.min(free, MAX_CLAIM)) await waitForWork()
    }
  }

  return {
    get active () { return running.size },
    async start () {
      await listen()
      renewer = setInterval(() => {
        if (running.size === 0) return
        pool.query(sql.renew(schema), [[...running.keys()], options.leaseMs])
          .catch((err: Error) => log.warn({ err: err.message }, 'anvil worker: journal queue lease renewal failed'))
      }, Math.max(100, Math.floor(options.leaseMs / 3))).unref()
      loop = claimLoop()
    },
    async close (timeoutMs) {
      closing = true
      wake?.()
      await loop
      const all = Promise.allSettled([...running.values()])
      let timer: NodeJS.Timeout | undefined
      const finished = await Promise.race([all.then(() => true), new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs) })])
      clearTimeout(timer)
      if (!finished) log.warn({ timeoutMs, active: running.size }, 'anvil worker: shutdown timeout; the running jobs run again once their leases pass')
      clearInterval(renewer)
      if (listener !== undefined) {
        const client = listener
        listener = undefined
        await client.query(`UNLISTEN ${sql.channelOf(schema)}`).then(() => client.release(), (err: Error) => client.release(err))
      }
    }
  }
}
