import { Worker, type Job, type MinimalJob } from 'bullmq'
import {
  DEFAULT_CONCURRENCY, DEFAULT_QUEUE_NAME, DEFAULT_RETENTION, DEFAULT_SHUTDOWN_TIMEOUT_MS,
  DEFAULT_SWEEP_INTERVAL_MS, STALLED_MESSAGE
} from '../shared/constants.js'
import { labelsOf, publish } from '../shared/diagnostics.js'
import { deadLetter, noteUnrecoverable, pruneDeadLetters, sweepFailed, type DeadLetterData } from './dead-letter.js'
import { errors } from '../shared/errors.js'
import { within } from '../time/within.js'
import { every, type Repeating } from '../time/every.js'
import { type WebhookJobData } from '../queue/job-data.js'
import { toEvent, type WebhookEvent } from './webhook-event.js'
import { checkedPrefix } from '../redis/checked-prefix.js'
import { watchClock } from '../redis/clock-skew.js'
import { DEFAULT_MAX_CLOCK_SKEW_MS, guardClock } from '../redis/clock-guard.js'
import { openQueues } from '../queue/open-queues.js'
import { claimOrRefuse, deploymentIdOf, redisLabel } from '../queue/deployment.js'
import { BACKOFF_TYPE, delayAfter } from '../queue/retry.js'
import { DEFAULT_KEEP_JOBS } from '../queue/queue-settings.js'
import { checkTelemetry } from '../queue/telemetry.js'
import { checkWorkerOptions, type WorkerOptions } from './worker-options.js'
import { startHandler } from './handler-start.js'
import { reportDeadLetter } from './dead-letter-event.js'
import { openJournal, type Journal } from '../journal/journal.js'
import { runJournaled } from '../journal/run-journaled.js'
import { journalIdOf } from '../journal/journal-id-of.js'
import { createPgConsumer, type PgConsumer } from '../journal/pg-consumer.js'
import { DEFAULT_JOURNAL_POLL_MS } from '../journal/journal-options.js'
import { silentLogger, type AnvilLogger } from '../shared/logger.js'

export type { WorkerOptions } from './worker-options.js'

/** What a handler may use besides the event. */
export interface HandlerContext {
  /** Adds a line to the job's log in Redis (BullMQ's `job.log`), kept with the job. */
  log (line: string): Promise<void>
}

/** A function of the event, or a router (`createRouter()`), which is one. */
export type WebhookHandler = (event: WebhookEvent, context: HandlerContext) => unknown

export interface AnvilWorker {
  /** Starts taking jobs and runs a first sweep. Resolves once the worker is connected and running. */
  start (): Promise<void>
  /** Waits for active jobs up to the shutdown timeout, then forces; closes what it created. */
  close (): Promise<void>
  /** One sweep now: dead-letters finally-failed jobs not yet dead-lettered. Returns how many it looked at. */
  sweep (): Promise<number>
  readonly worker: Worker<WebhookJobData>
  readonly running: boolean
  /** The journal, when `journal` was given. */
  readonly journal?: Journal
}

/** Why a journaled job completed without its handler's effects. */
const NOT_RUN = {
  done: 'anvil worker: run skipped, this job has already committed its event done',
  overtaken: 'anvil worker: retry skipped, a journal replay runs this event on another job'
} as const


/**
 * BullMQ's `close(true)` cannot force a close that has already begun: a second call returns the first
 * call's promise, which waits for the active jobs with no timeout. `abandon` does what a forced close does
 * after that wait: stop renewing the active jobs' locks (so another worker retries them as stalled once
 * the locks expire) and drop the connections (a job that finishes later is then not moved: `backend.closing`).
 */
class AnvilBullWorker extends Worker<WebhookJobData> {
  async abandon (): Promise<void> {
    await this.lockManager.close()
    await this.backend.close(true)
  }
}

function definedOnly<T extends object> (values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>
}

export function createWorker (handler: WebhookHandler, options: WorkerOptions): AnvilWorker {
  if (typeof handler !== 'function') throw new errors.INVALID_OPTIONS('handler must be a function')
  const prefix = checkedPrefix(options, checkWorkerOptions)
  const telemetry = checkTelemetry(options.telemetry)
  const log = options.logger ?? silentLogger
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS
  const sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS
  const deadAgeSeconds = options.deadAgeSeconds ?? DEFAULT_RETENTION.deadAgeSeconds
  const onRedisError = (err: Error): void => log.warn({ err: err.message }, 'anvil worker: Redis error')

  const journal = options.journal === undefined ? undefined : openJournal(options.journal)
  // The journal's database holds the outbox: a dead letter is reported there (inbound.dead_lettered).
  const report = journal === undefined ? undefined : reportDeadLetter(journal.db, options.consoleUrl, log)
  // `journal: { queue: 'postgres' }`: the events are claimed from the journal's database; BullMQ's loop never runs.
  const consumer: PgConsumer | undefined = journal === undefined || options.journal?.queue !== 'postgres'
    ? undefined
    : createPgConsumer(journal, (event) => handler(event, { log: async (line: string) => { log.info({ jobId: event.id }, line) } }), {
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      leaseMs: options.lockDurationMs ?? 30_000,
      pollMs: options.journal?.pollIntervalMs ?? DEFAULT_JOURNAL_POLL_MS,
      maxStalledCount: options.maxStalledCount ?? 1,
      log
    })
  const queues = openQueues<WebhookJobData, DeadLetterData>(options.redis, 'worker', { queueName, prefix }, onRedisError)
  const { connection, main, dead } = queues

  // Every per-job line carries jobId and requestId, so a request can be followed from the ingress's lines.
  // The start is debug: at info there is one line per attempt's outcome (the listeners below).
  const worker = new AnvilBullWorker(queueName, async (job: Job<WebhookJobData>) => {
    const jobId = job.id as string
    const attempt = job.attemptsMade + 1
    log.debug?.({ jobId, requestId: job.data.requestId, attempt }, 'anvil worker: job started')
    const maxAttempts = job.opts.attempts ?? 1
    const event = toEvent(jobId, job.data, attempt, maxAttempts)
    try {
      const context = { log: async (line: string) => { await job.log(line) } }
      if (journal === undefined) await handler(event, context)
      else {
        const outcome = await runJournaled(journal, (journaled) => handler(journaled, context), event, { jobId, data: job.data, attempt, maxAttempts, restarted: job.attemptsStarted > attempt })
        if (outcome !== 'ran') {
          log.info({ jobId, requestId: job.data.requestId, attempt }, NOT_RUN[outcome])
          return
        }
      }
    } catch (err) {
      await noteUnrecoverable(job, err)
      throw err
    }
    publish('processed', () => ({ ...labelsOf(job.data), jobId, attempt, receivedToHandledMs: Date.now() - job.data.receivedAt }))
  }, {
    connection: connection.client,
    prefix,
    autorun: false,
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    // The default retention: a job carries its own only when its ingress was given another (src/queue/queue-settings.ts).
    ...DEFAULT_KEEP_JOBS,
    // BullMQ spreads these over its defaults, so an undefined would erase one: only set what was given.
    ...definedOnly({
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: options.maxStalledCount,
      telemetry
    }),
    // The schedule travels with the job, so a worker never disagrees with the ingress that accepted it.
    settings: {
      // A job without a schedule is not retried: a throw here would leave it active until it stalled out.
      backoffStrategy: (attemptsMade: number, type?: string, _err?: Error, job?: MinimalJob) => {
        const retry = (job?.data as Partial<WebhookJobData> | undefined)?.retry
        return type === BACKOFF_TYPE && Array.isArray(retry) ? delayAfter(retry, attemptsMade) : -1
      }
    }
  })
  worker.on('error', onRedisError)
  // On the event, not after the handler: only a job that Redis now holds as completed is logged so.
  worker.on('completed', (job) => {
    log.info({ jobId: job.id, requestId: job.data.requestId, attempt: job.attemptsMade, durationMs: (job.finishedOn ?? Date.now()) - (job.processedOn ?? job.timestamp) }, 'anvil worker: job completed')
  })
  worker.on('failed', (job, err) => {
    if (job === undefined) return
    // The stack only at debug: at info a failing handler would write it once per attempt of every job.
    const stack = log.isLevelEnabled?.('debug') === true ? err.stack : undefined
    log.warn({ jobId: job.id, requestId: job.data.requestId, attempt: job.attemptsMade, err: err.message, stack }, 'anvil worker: attempt failed')
    publish('failed', () => ({ ...labelsOf(job.data), jobId: job.id as string, attempt: job.attemptsMade }))
    void deadLetterIfFinal(job, err)
    // A job failed without its processor (it stalled out) was never marked by it.
    if (journal !== undefined && job.finishedOn !== undefined && job.failedReason === STALLED_MESSAGE) {
      journal.finished({ id: journalIdOf(job.data), jobId: job.id as string, attempt: job.attemptsMade, status: 'dead', lastError: err.message, errorClass: 'stalled', startedAt: job.processedOn === undefined ? undefined : new Date(job.processedOn), data: job.data })
        .catch((err: Error) => log.warn({ jobId: job.id, err: err.message }, 'anvil worker: journal write failed'))
    }
  })
  // Taken back from a worker that died or was forced to stop: it runs again (its next start line has the requestId).
  worker.on('stalled', (jobId) => log.warn({ jobId }, 'anvil worker: stalled job taken back'))

  /** Counted and logged once per dead letter, whether the listener or a sweep wrote it. */
  function noteDeadLettered (job: Job<WebhookJobData>, id: string): void {
    publish('deadLettered', () => ({ ...labelsOf(job.data), jobId: job.id as string, deadLetterId: id }))
    log.warn({ jobId: job.id, requestId: job.data.requestId, deadLetterId: id }, 'anvil worker: dead-lettered')
  }

  async function deadLetterIfFinal (job: Job<WebhookJobData>, err: Error): Promise<void> {
    try {
      // BullMQ sets finishedOn only when it moves the job to "failed" for good (a retry leaves it unset).
      // Asking Redis for the state instead would miss a job that retention removed at once (failedCount 0)
      // or that other failures pushed out before the listener ran; the sweep could not find those either.
      if (job.finishedOn === undefined) return
      const { id, created } = await deadLetter(dead, job, err, undefined, report)
      if (created) noteDeadLettered(job, id)
    } catch (err) {
      // The sweep will pick it up.
      log.error({ jobId: job.id, requestId: job.data.requestId, err: (err as Error).message }, 'anvil worker: dead-lettering failed')
    }
  }

  // Paused while this host's clock is off from Redis's: its retries and the delayed jobs it promotes would fire early or late.
  let looping = false
  const runJobs = (): void => {
    if (consumer !== undefined) return
    if (looping) { void worker.resume(); return }
    looping = true
    worker.run().catch((err: Error) => log.error({ err: err.message }, 'anvil worker: stopped'))
  }
  const clock = guardClock(connection.client, log, {
    maxSkewMs: options.maxClockSkewMs ?? DEFAULT_MAX_CLOCK_SKEW_MS,
    name: 'anvil worker',
    onChange: (ok) => {
      if (closing !== undefined || !running) return
      if (ok) runJobs()
      else void worker.pause(true)
    }
  })

  let sweeper: Repeating | undefined
  let pruner: Repeating | undefined
  let running = false
  let closing: Promise<void> | undefined
  let stopClock: (() => void) | undefined

  async function sweep (): Promise<number> {
    const seen = await sweepFailed(main, dead, connection.client, noteDeadLettered, report)
    await pruneDeadLetters(dead, deadAgeSeconds)
    return seen
  }

  const sweepTrouble = (err: Error): void => log.warn({ err: err.message }, 'anvil worker: sweep failed')

  async function prune (journal: Journal): Promise<void> {
    const { dropped, deleted } = await journal.prune()
    if (dropped.length > 0 || deleted > 0) log.info({ dropped, deleted }, 'anvil worker: journal retention dropped old days')
  }

  return {
    worker,
    journal,
    // Running from start() on, as before the clock check: false once that check (or a later one) finds the clock off.
    get running () { return running && clock.ok && (!looping || worker.isRunning()) },
    async start () {
      if (running) return
      // With a journal the queue is its database's deployment's: another deployment's worker on this Redis and prefix is refused here.
      if (journal !== undefined) {
        await claimOrRefuse(connection.client, { prefix, queues: [queueName], deployment: await deploymentIdOf(journal.db), redisLabel: redisLabel(options.redis) })
      }
      if (running || closing !== undefined) return
      running = true
      // A router refuses new handlers from here on (a handler added to a running worker would miss events).
      startHandler(handler, log)
      await worker.waitUntilReady()
      if (await clock.first() && closing === undefined) runJobs()
      if (consumer !== undefined && closing === undefined) await consumer.start()
      if (closing === undefined) stopClock ??= watchClock(connection.client, log)
      if (sweepIntervalMs > 0) {
        await sweep().catch(sweepTrouble)
        if (closing === undefined) sweeper = every(sweepIntervalMs, sweep, sweepTrouble)
      }
      if (journal !== undefined && journal.retentionIntervalMs > 0 && closing === undefined) {
        // A pass at start too: a worker restarted more often than the interval still prunes.
        pruner = every(journal.retentionIntervalMs, async () => await prune(journal),
          (err) => log.warn({ err: err.message }, 'anvil worker: journal retention failed'), { immediate: true })
      }
    },
    close () {
      closing ??= (async () => {
        stopClock?.()
        clock.stop()
        // Not waited for: a retention pass in flight may take longer than the shutdown allows.
        void sweeper?.stop()
        void pruner?.stop()
        await consumer?.close(shutdownTimeoutMs)
        const graceful = worker.close().then(() => true, (err: Error) => {
          log.warn({ err: err.message }, 'anvil worker: close failed')
          return true
        })
        // Held open (ref): a job that waits on nothing the loop sees must not let the process exit mid-close.
        if (!await within(graceful, shutdownTimeoutMs, () => false, { ref: true })) {
          log.warn({ timeoutMs: shutdownTimeoutMs }, 'anvil worker: shutdown timeout, forcing; active jobs will be retried as stalled')
          await worker.abandon()
        }
        running = false
        await queues.close()
        await journal?.close()
      })()
      return closing
    },
    sweep
  }
}
