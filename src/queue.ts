import { randomUUID } from 'node:crypto'
import { Queue } from 'bullmq'
import { DEFAULT_ENQUEUE_TIMEOUT_MS, EVENT_JOB_PREFIX, JOB_NAME } from './constants.js'
import { errors } from './errors.js'
import type { WebhookJobData } from './job.js'
import { connect, disconnect, type OwnedConnection, type RedisInput } from './redis.js'
import { jobOptions, type QueueSettings } from './queue-settings.js'
import type { JobsOptions } from 'bullmq'

/** An accepted event, before it has a job. */
export type EnqueueInput = Omit<WebhookJobData, 'v' | 'retry' | 'payload'> & { payload: Buffer }

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
  onRedisError?: (err: Error) => void
}

/** The producer side: one BullMQ `add` per event, deduplicated atomically by Redis. */
export class WebhookQueue {
  readonly queue: Queue<WebhookJobData>
  readonly settings: QueueSettings
  private readonly connection: OwnedConnection
  private readonly timeoutMs: number
  private readonly baseOptions: JobsOptions

  constructor (options: WebhookQueueOptions) {
    this.settings = options.settings
    this.timeoutMs = options.enqueueTimeoutMs ?? DEFAULT_ENQUEUE_TIMEOUT_MS
    this.connection = connect(options.redis, 'producer', options.onRedisError)
    this.queue = new Queue<WebhookJobData>(this.settings.queueName, {
      connection: this.connection.client,
      // BullMQ waits for the connection before its first command; while Redis is away, adds wait and
      // the enqueue timeout turns them into 503s. Reconnection never gives up, so nothing needs a restart.
      prefix: this.settings.prefix
    })
    this.queue.on('error', options.onRedisError ?? (() => {}))
    this.baseOptions = jobOptions(this.settings)
  }

  /**
   * Adds the event unless its key was seen within the dedupe window. A fresh job id goes in with
   * BullMQ's deduplication: when Redis hands back another id, the event was a duplicate. One round
   * trip, atomic across any number of ingress processes.
   */
  async enqueue (input: EnqueueInput): Promise<EnqueueResult> {
    const jobId = EVENT_JOB_PREFIX + randomUUID()
    const data: WebhookJobData = {
      ...input,
      v: 1,
      payload: input.payload.toString('base64'),
      retry: [...this.settings.retrySchedule]
    }
    const added = this.queue.add(JOB_NAME, data, {
      ...this.baseOptions,
      jobId,
      deduplication: { id: input.key, ttl: this.settings.dedupeWindowMs }
    })
    const job = await withTimeout(added, this.timeoutMs)
    const id = job.id as string
    return { jobId: id, replayed: id !== jobId }
  }

  /** Resolves true once the connection is ready, or false when `ms` pass first. */
  async waitForRedis (ms: number): Promise<boolean> {
    const client = this.connection.client
    if (client.status === 'ready') return true
    return await new Promise<boolean>((resolve) => {
      const done = (ready: boolean): void => {
        clearTimeout(timer)
        client.off('ready', onReady)
        resolve(ready)
      }
      const onReady = (): void => done(true)
      const timer = setTimeout(() => done(false), ms)
      timer.unref()
      client.on('ready', onReady)
    })
  }

  /** Resolves when Redis answers a PING within the timeout. */
  async ping (): Promise<boolean> {
    try {
      return await withTimeout(this.connection.client.ping(), this.timeoutMs) === 'PONG'
    } catch {
      return false
    }
  }

  async close (): Promise<void> {
    await this.queue.close()
    await disconnect(this.connection)
  }
}

/** Any Redis failure (refused, OOM, read-only replica, timeout) becomes one 503 error. */
async function withTimeout<T> (promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms)
    timer.unref()
  })
  try {
    return await Promise.race([promise, timeout])
  } catch (err) {
    throw new errors.REDIS_UNAVAILABLE((err as Error).message, { cause: err })
  } finally {
    clearTimeout(timer)
  }
}
