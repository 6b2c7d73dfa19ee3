import { randomUUID } from 'node:crypto'
import { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { DEFAULT_ENQUEUE_TIMEOUT_MS, EVENT_JOB_PREFIX, JOB_NAME } from '../shared/constants.js'
import { errors } from '../shared/errors.js'
import type { WebhookJobData } from './job-data.js'
import { connect, disconnect, isCluster, targetsCluster, type OwnedConnection, type RedisInput } from '../redis/connect.js'
import { jobOptions, type QueueSettings } from './queue-settings.js'
import { MicroBatch } from './micro-batch.js'
import { DuplicateShare } from './duplicate-share.js'
import { addCorked, type BatchJob } from './add-corked.js'
import { pingWithin, redisWithin } from '../redis/redis-within.js'
import { redisReady } from '../redis/redis-outage.js'
import { within } from '../time/within.js'
import type { Telemetry } from './telemetry.js'

/**
 * Adds gathered into one write at most. Redis answers a batch only after its last add, so a small bound keeps
 * Redis and the ingress busy at once; a corked batch (src/queue/add-corked.ts) costs little more when small.
 */
export const MAX_BATCH = 8

/** An accepted event, before it has a job. */
export type EnqueueInput = Omit<WebhookJobData, 'v' | 'retry' | 'payload' | 'replayOf'> & { payload: Buffer }

export interface EnqueueResult {
  jobId: string
  /** True when the key was already enqueued within the dedupe window: no new job was made. */
  replayed: boolean
}

export interface WebhookQueueOptions {
  redis: RedisInput
  settings: QueueSettings
  /** How long Redis has to acknowledge an add before the caller gets ANVIL_ERR_REDIS_UNAVAILABLE. */
  enqueueTimeoutMs?: number
  /**
   * Opt-in: after each add, `WAIT replicas timeoutMs`, and a 202 only once that many replicas have the
   * write. Without it an acknowledged add can be lost when an asynchronous replica is promoted.
   * One Redis server (with replicas) only; not on a cluster connection.
   */
  replication?: { replicas: number, timeoutMs: number }
  /** BullMQ telemetry (checked by the caller); unset, nothing here touches tracing. */
  telemetry?: Telemetry
  onRedisError?: (err: Error) => void
}

/** One add waiting for its batch; `trace` is the enqueuing request's propagated context, when traced. */
interface PendingAdd { data: WebhookJobData, jobId: string, key: string, trace?: string }

/** The producer side: one BullMQ `add` per event, deduplicated atomically by Redis. */
export class WebhookQueue {
  readonly queue: Queue<WebhookJobData>
  readonly settings: QueueSettings
  private readonly connection: OwnedConnection
  /** The producer connection (the clock check reads Redis's time on it). */
  get client (): OwnedConnection['client'] { return this.connection.client }
  private readonly timeoutMs: number
  private nextReady: Promise<void> | undefined
  private everConnected = false
  private readonly batch: MicroBatch<PendingAdd, string>
  private readonly telemetry: Telemetry | undefined
  /** Reads of dedupe keys, one MGET per batch: the cheap answer to a duplicate during a storm. */
  private readonly lookups: MicroBatch<string, string | null>
  private readonly duplicates = new DuplicateShare()

  constructor (options: WebhookQueueOptions) {
    this.settings = options.settings
    this.timeoutMs = options.enqueueTimeoutMs ?? DEFAULT_ENQUEUE_TIMEOUT_MS
    const { replication } = options
    // Checked before connecting, so a bad option leaves no client behind.
    if (replication !== undefined) checkReplication(replication, this.timeoutMs, targetsCluster(options.redis))
    this.telemetry = options.telemetry
    this.connection = connect(options.redis, 'producer', options.onRedisError)
    this.queue = new Queue<WebhookJobData>(this.settings.queueName, {
      connection: this.connection.client,
      // Reconnection never gives up, so nothing needs a restart after Redis comes back; while it is away,
      // enqueue() hands BullMQ no add at all (see there).
      prefix: this.settings.prefix,
      ...(this.telemetry === undefined ? {} : { telemetry: this.telemetry })
    })
    this.queue.on('error', options.onRedisError ?? (() => {}))
    this.everConnected = this.connected()
    if (!this.everConnected) this.connection.client.once('ready', () => { this.everConnected = true })
    // Retention is among them only when it is not the default (src/queue/queue-settings.ts).
    const { attempts, backoff, removeOnComplete, removeOnFail } = jobOptions(this.settings)
    const dedupeTtl = this.settings.dedupeWindowMs
    // Traced, addBulk makes the producer span; on a cluster, the adds go through its pipeline to the slot's node.
    const client = this.connection.client
    const corked = this.telemetry === undefined && !isCluster(client)
    this.batch = new MicroBatch(async (items) => await withTimeout((async () => {
      const jobs = items.map(({ data, jobId, key, trace }) => {
        const deduplication = { id: key, ttl: dedupeTtl }
        // Spelled out, not spread over jobOptions(): one object shape per queue, and a literal is far cheaper per event.
        const opts: BatchJob['opts'] = removeOnComplete === undefined
          ? { attempts, backoff, jobId, deduplication }
          : { attempts, backoff, removeOnComplete, removeOnFail, jobId, deduplication }
        // addBulk would give every job of the batch the context of the one call (the first request's):
        // each job carries its own request's, so its worker span is that request's child.
        if (trace !== undefined) opts.telemetry = { metadata: trace }
        return { data, opts }
      })
      const ids = corked
        ? await addCorked(this.queue, client as Redis, jobs)
        : (await this.queue.addBulk(jobs.map(({ data, opts }) => ({ name: JOB_NAME, data, opts })))).map((job) => job.id as string)
      if (replication !== undefined) await this.waitForReplicas(replication)
      return ids
    })(), this.timeoutMs), MAX_BATCH)
    // The same key BullMQ's add script sets (`deduplication.ttl` > 0 always: the window's minimum is 1 ms).
    const dedupeKey = `${this.queue.keys.de}:`
    this.lookups = new MicroBatch(async (keys) => await withTimeout(
      this.connection.client.mget(keys.map((key) => dedupeKey + key)), this.timeoutMs
    ), MAX_BATCH)
  }

  /** WAIT runs on the connection that wrote, so it covers this batch's adds. */
  private async waitForReplicas ({ replicas, timeoutMs }: { replicas: number, timeoutMs: number }): Promise<void> {
    const acknowledged = Number(await this.connection.client.call('wait', replicas, timeoutMs))
    if (acknowledged < replicas) {
      throw new Error(`WAIT: ${acknowledged} of ${replicas} replica(s) acknowledged within ${timeoutMs} ms`)
    }
  }

  /**
   * Adds the event unless its key was seen within the dedupe window. A fresh job id goes in with
   * BullMQ's deduplication: when Redis hands back another id, the event was a duplicate. Atomic across
   * any number of ingress processes; events that arrive together share one pipelined round trip.
   */
  async enqueue (input: EnqueueInput): Promise<EnqueueResult> {
    // BullMQ would hold an add made while Redis is not connected in memory and write it whenever Redis
    // comes, long after the sender got its 503. So an add is only handed over on a live connection: during
    // an outage the answer is 503 at once; before the first connection, the add waits for it up to the timeout.
    if (!this.connected() && (this.everConnected || !await this.waitForRedis(this.timeoutMs))) {
      throw new errors.REDIS_UNAVAILABLE({ cause: new Error(`Redis connection is ${this.connection.client.status}`) })
    }
    if (this.duplicates.likely) {
      // Read first: a duplicate is answered from its dedupe key alone. A key that appears after this read
      // is still caught by the add's own atomic check below.
      const existing = await this.lookups.add(input.key)
      if (existing !== null) {
        this.duplicates.note(true)
        return { jobId: existing, replayed: true }
      }
    }
    const jobId = EVENT_JOB_PREFIX + randomUUID()
    // Field by field, not a spread over `input`: one object shape for every job, and no copy made only to be
    // serialised. The schedule is shared: the job's JSON is written from it at once and nothing changes it.
    const data: WebhookJobData = {
      v: 1,
      source: input.source,
      key: input.key,
      payload: input.payload.toString('base64'),
      contentType: input.contentType,
      signature: input.signature,
      eventId: input.eventId,
      eventType: input.eventType,
      provider: input.provider,
      headers: input.headers,
      receivedAt: input.receivedAt,
      retry: this.settings.retrySchedule,
      requestId: input.requestId
    }
    const pending: PendingAdd = { data, jobId, key: input.key }
    if (this.telemetry !== undefined) {
      const { contextManager } = this.telemetry
      pending.trace = contextManager.getMetadata(contextManager.active())
    }
    const id = await this.batch.add(pending)
    const replayed = id !== jobId
    this.duplicates.note(replayed)
    return { jobId: id, replayed }
  }

  private connected (): boolean {
    return redisReady(this.connection.client)
  }

  /** Resolves true once the connection is ready, or false when `ms` pass first. Waiters share one listener. */
  async waitForRedis (ms: number): Promise<boolean> {
    if (this.connected()) return true
    const client = this.connection.client
    this.nextReady ??= new Promise<void>((resolve) => {
      client.once('ready', () => {
        this.nextReady = undefined
        resolve()
      })
    })
    return await within(this.nextReady.then(() => true), ms, () => false)
  }

  /** True when Redis answers a PING within `timeoutMs` (default: the enqueue timeout). */
  async ping (timeoutMs = this.timeoutMs): Promise<boolean> {
    return await pingWithin(this.connection.client, timeoutMs)
  }

  async close (): Promise<void> {
    await this.queue.close()
    await disconnect(this.connection)
  }
}

function checkReplication (replication: { replicas: number, timeoutMs: number }, enqueueTimeoutMs: number, cluster: boolean): void {
  const { replicas, timeoutMs } = replication
  if (!Number.isInteger(replicas) || replicas < 1) throw new errors.INVALID_OPTIONS('replication.replicas must be a whole number >= 1')
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs >= enqueueTimeoutMs) {
    throw new errors.INVALID_OPTIONS(`replication.timeoutMs must be a whole number from 1 to below enqueueTimeoutMs (${enqueueTimeoutMs})`)
  }
  if (cluster) throw new errors.INVALID_OPTIONS('replication (WAIT) is not supported on a Redis Cluster connection')
}

/** Any Redis failure (refused, OOM, read-only replica, timeout) becomes one 503 error. */
async function withTimeout<T> (promise: Promise<T>, ms: number): Promise<T> {
  try {
    return await redisWithin(promise, ms)
  } catch (err) {
    // The sender sees only that the queue is unavailable; the reason (OOM, refused, timeout) is logged.
    throw new errors.REDIS_UNAVAILABLE({ cause: err })
  }
}
