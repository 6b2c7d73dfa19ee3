/**
 * The delivery worker: a BullMQ Worker on the outbound queue that signs and POSTs each job through the
 * SSRF-guarded dispatcher, retries on the schedule each job carries, and keeps one bad endpoint from slowing the rest.
 */
import { Worker, type Job, type MinimalJob } from 'bullmq'
import { DEFAULT_CONCURRENCY, DEFAULT_SHUTDOWN_TIMEOUT_MS, STALLED_MESSAGE } from '../shared/constants.js'
import { within } from '../time/within.js'
import { connect, disconnect } from '../redis/connect.js'
import { checkedPrefix } from '../redis/checked-prefix.js'
import { watchClock } from '../redis/clock-skew.js'
import { claimOrRefuse, redisLabel } from '../queue/deployment.js'
import { DEFAULT_MAX_CLOCK_SKEW_MS, guardClock } from '../redis/clock-guard.js'
import { createCircuitBreaker } from './circuit-breaker.js'
import { createEndpointRateLimit } from './endpoint-rate-limit.js'
import { createEndpointGate } from './endpoint-gate.js'
import { DEFAULT_OUTBOUND_QUEUE_NAME, type OutboundJobData } from './delivery-job.js'
import {
  checkDeliveryWorkerOptions, CIRCUIT_CLEAN_CACHE_MS, DEFAULT_CIRCUIT_OPEN_MS, SLOW_ENDPOINT_AFTER_MS, DEFAULT_DELIVERY_TIMEOUT_MS,
  DEFAULT_DISABLE_AFTER_MS, DEFAULT_FAILURE_THRESHOLD, DEFAULT_RESPONSE_CAP_BYTES, RESPONSE_BODY_TIMEOUT_MS, type DeliveryWorkerOptions
} from './delivery-options.js'
import { nextDelay, OUTBOUND_BACKOFF_TYPE, scheduleOf } from './delivery-schedule.js'
import { MAX_RETRIES } from '../shared/schemas.js'
import { createEndpointDispatchers } from '../receiver-auth/endpoint-dispatchers.js'
import { createOAuthTokens } from '../receiver-auth/oauth-tokens.js'
import { attemptOf, DeliveryFailure, exhaustion, type DeliverDeps } from './run-attempt.js'
import { releaseFailedJob, runInOrder } from './ordered-attempt.js'
import { silentLogger, type AnvilLogger } from '../shared/logger.js'
import { checkTelemetry } from '../queue/telemetry.js'

export interface DeliveryWorker {
  /** Starts taking jobs; resolves once the worker is connected. */
  start (): Promise<void>
  /** Waits for deliveries in flight up to the shutdown timeout; closes what it created. */
  close (): Promise<void>
  readonly worker: Worker<OutboundJobData>
  /** Taking jobs: started, not closed, and its host clock within `maxClockSkewMs` of Redis's (a readiness probe reads it). */
  readonly running: boolean
}

/**
 * A completed job stays for dedupe (its id) for the retention's age; its body, up to the payload limit, is no
 * use then: the job keeps its ids only. A job already removed (the retention's count) has nothing to strip.
 */
export async function stripBody (job: Job<OutboundJobData>): Promise<void> {
  await job.updateData({ ...job.data, body: '' }).catch((err: Error) => {
    if (!/Missing key/.test(err.message)) throw err
  })
}

/** A probe holds its lease a little longer than its POST may take. */
const PROBE_LEASE_MARGIN_MS = 5000

export function createDeliveryWorker (options: DeliveryWorkerOptions): DeliveryWorker {
  const prefix = checkedPrefix(options, checkDeliveryWorkerOptions)
  const log = options.logger ?? silentLogger
  const telemetry = checkTelemetry(options.telemetry)
  const timeoutMs = options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
  const maxInFlight = options.maxInFlightPerEndpoint ?? Math.ceil(concurrency / 2)
  // No cap given: half the slots while several endpoints are active (or one was slow) within a timeout, else all of them.
  const adaptive = options.maxInFlightPerEndpoint === undefined ? { soloMaxInFlight: concurrency, recentMs: timeoutMs } : {}
  const connection = connect(options.redis, 'worker', (err) => log.warn({ err: err.message }, 'anvil delivery: Redis error'))
  const dispatchers = createEndpointDispatchers({ allowNets: options.allowNets, connectTimeoutMs: timeoutMs, lookup: options.lookup })
  const circuit = options.circuit === false
    ? undefined
    : createCircuitBreaker(connection.client, prefix, {
      failureThreshold: options.circuit?.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD,
      openMs: options.circuit?.openMs ?? DEFAULT_CIRCUIT_OPEN_MS,
      probeLeaseMs: timeoutMs + PROBE_LEASE_MARGIN_MS,
      cleanCacheMs: CIRCUIT_CLEAN_CACHE_MS
    })
  const deps: DeliverDeps = {
    store: options.store,
    dispatchers,
    // Token fetches go through the guard too, on the shared connections.
    tokens: createOAuthTokens({ dispatcher: dispatchers.shared, timeoutMs }),
    send: { dispatcher: dispatchers.shared, timeoutMs, responseCapBytes: options.responseCapBytes ?? DEFAULT_RESPONSE_CAP_BYTES, bodyTimeoutMs: RESPONSE_BODY_TIMEOUT_MS },
    httpsOnly: options.httpsOnly ?? false,
    circuit,
    rateLimit: createEndpointRateLimit(connection.client, prefix),
    // A cap at or above the concurrency can never bind: no gate then.
    gate: maxInFlight >= concurrency ? undefined : createEndpointGate({ maxInFlight, slowAfterMs: SLOW_ENDPOINT_AFTER_MS, timeoutMs, ...adaptive }),
    disableAfterMs: options.disableAfterMs ?? DEFAULT_DISABLE_AFTER_MS,
    onEndpointDisabled: options.onEndpointDisabled,
    onAttempt: options.onAttempt,
    ...(telemetry === undefined ? {} : { telemetry }),
    log
  }

  const queueName = options.queueName ?? DEFAULT_OUTBOUND_QUEUE_NAME
  const worker = new Worker<OutboundJobData>(queueName,
    async (job: Job<OutboundJobData>, token?: string) => await runInOrder(job, token, deps), {
      connection: connection.client,
      prefix,
      autorun: false,
      concurrency,
      // A stall is a failed attempt of its own (runAttempt counts it), so a job may stall as often as any job may be tried.
      maxStalledCount: MAX_RETRIES + 1,
      ...(options.lockDurationMs === undefined ? {} : { lockDuration: options.lockDurationMs }),
      ...(options.stalledIntervalMs === undefined ? {} : { stalledInterval: options.stalledIntervalMs }),
      settings: {
        // The schedule is the job's own: the publisher's setting is the only one.
        backoffStrategy: (attemptsMade: number, type?: string, err?: Error, job?: MinimalJob) => type === OUTBOUND_BACKOFF_TYPE && job !== undefined
          ? nextDelay(scheduleOf(job as MinimalJob<OutboundJobData>), attemptsMade, {
            jitter: options.jitter,
            retryAfterMs: err instanceof DeliveryFailure ? err.retryAfterMs : undefined,
            retryAfterMaxMs: options.retryAfterMaxMs
          })
          : -1
      }
    })
  worker.on('error', (err) => log.warn({ err: err.message }, 'anvil delivery: worker error'))
  worker.on('completed', (job) => {
    stripBody(job).catch((err: Error) => log.warn({ jobId: job.id, err: err.message }, 'anvil delivery: completed job kept its body'))
  })
  worker.on('failed', (job, err) => {
    if (job === undefined) return
    const final = job.finishedOn !== undefined
    log[final ? 'error' : 'warn']({ jobId: job.id, endpointId: job.data.endpointId, attempt: job.attemptsMade, err: err.message },
      final ? 'anvil delivery: failed for good' : 'anvil delivery: attempt failed')
    // Failed by BullMQ without a run (it stalled past the limit): its stalls get their rows, so it ends logged.
    if (final && job.failedReason === STALLED_MESSAGE && deps.store.resumeAttempt !== undefined) {
      deps.store.resumeAttempt({ ...attemptOf(job), attempt: job.attemptsMade, stalls: job.stalledCounter, since: new Date(job.timestamp), exhausted: exhaustion(job.data) })
        // Given up without a run: a keyed job lets its key's next message go once its stalls are logged.
        .then(async () => await releaseFailedJob(job, deps))
        .catch((err: Error) => log.error({ jobId: job.id, err: err.message }, 'anvil delivery: stalled job not logged'))
    }
  })

  let closing: Promise<void> | undefined
  let stopClock: (() => void) | undefined
  // Paused while this host's clock is off from Redis's: its retries and the delayed jobs it promotes would fire early or late.
  let looping = false
  const runJobs = (): void => {
    if (looping) { void worker.resume(); return }
    looping = true
    worker.run().catch((err: Error) => log.error({ err: err.message }, 'anvil delivery: stopped'))
  }
  const clock = guardClock(connection.client, log, {
    maxSkewMs: options.maxClockSkewMs ?? DEFAULT_MAX_CLOCK_SKEW_MS,
    name: 'anvil delivery',
    onChange: (ok) => {
      if (closing !== undefined || !started) return
      if (ok) runJobs()
      else void worker.pause(true)
    }
  })
  let started = false
  return {
    worker,
    get running () { return started && closing === undefined && clock.ok && (!looping || worker.isRunning()) },
    async start () {
      // A database's store names its deployment: the queue is claimed for it before any job is taken.
      if (options.store.deployment !== undefined) {
        await claimOrRefuse(connection.client, { prefix, queues: [queueName], deployment: await options.store.deployment(), redisLabel: redisLabel(options.redis) })
      }
      if (closing !== undefined) return
      started = true
      await worker.waitUntilReady()
      if (await clock.first() && closing === undefined) runJobs()
      if (closing === undefined) stopClock ??= watchClock(connection.client, log)
    },
    close () {
      closing ??= (async () => {
        stopClock?.()
        clock.stop()
        const shutdownTimeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS
        const graceful = worker.close().then(() => true, () => true)
        if (!await within(graceful, shutdownTimeoutMs, () => false, { ref: true })) {
          // Aborting the POSTs in flight ends their jobs (as failed attempts, retried later), which lets the close finish.
          log.warn({ timeoutMs: shutdownTimeoutMs }, 'anvil delivery: shutdown timeout, aborting deliveries in flight')
          await dispatchers.destroy()
          await graceful
        } else {
          await dispatchers.close()
        }
        await disconnect(connection)
      })()
      return closing
    }
  }
}
