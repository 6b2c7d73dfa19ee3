/**
 * Reads what operators watch from Redis: job counts by state, the dead-letter size, and whether Redis
 * answers at all. Used by the metrics gauges and the readiness check; every call is bounded in time, so a
 * scrape or a probe never hangs on a Redis that is away.
 */
import { Type, type Static } from '@sinclair/typebox'
import { DEFAULT_PREFIX, DEFAULT_QUEUE_NAME } from '../shared/constants.js'
import { openQueues } from './open-queues.js'
import type { RedisInput } from '../redis/connect.js'
import { Opaque, Prefix, QueueName, Whole } from '../shared/schemas.js'
import { pingWithin, redisWithin } from '../redis/redis-within.js'

/** How long a sample or a health PING may take before it counts as "Redis is not answering". */
export const DEFAULT_SAMPLE_TIMEOUT_MS = 1000
/** The states a gauge reports (BullMQ 6 has no "paused"). */
export const SAMPLED_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const
export type SampledState = (typeof SAMPLED_STATES)[number]

export const QueueSamplerOptionsSchema = Type.Object({
  /** A URL (a connection is opened and closed here) or an ioredis client (shared, left open). */
  redis: Opaque<RedisInput>(),
  /** @defaultValue `'webhooks'` */
  queueName: Type.Optional(QueueName()),
  /** @defaultValue `'{anvil}'` */
  prefix: Type.Optional(Prefix()),
  /** How long a sample or a PING may take. @defaultValue 1000 */
  timeoutMs: Type.Optional(Whole(1))
}, { additionalProperties: false })

export type QueueSamplerOptions = Static<typeof QueueSamplerOptionsSchema>

export interface QueueSample {
  queueName: string
  states: Record<SampledState, number>
  deadLetters: number
  /** Seconds since the oldest waiting dead letter was written; undefined when there is none. */
  oldestDeadLetterAgeSeconds?: number
}

export interface QueueSampler {
  readonly queueName: string
  sample (): Promise<QueueSample>
  /** True when Redis answers a PING within the timeout. */
  ping (): Promise<boolean>
  close (): Promise<void>
}

export function createQueueSampler (options: QueueSamplerOptions): QueueSampler {
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const timeoutMs = options.timeoutMs ?? DEFAULT_SAMPLE_TIMEOUT_MS
  // Commands wait for the connection (a probe right after start-up finds it still connecting), and every
  // call is bounded by the timeout, so a probe while Redis is away still says "down" within it.
  const queues = openQueues(options.redis, 'control', { queueName, prefix })
  const { connection, main, dead } = queues

  /** When the oldest waiting dead letter was written (epoch ms): its id from the list's tail, its timestamp from its hash. */
  async function oldestWaiting (): Promise<number | undefined> {
    const id = await connection.client.lindex(dead.toKey('wait'), -1)
    if (id === null) return undefined
    const at = await connection.client.hget(dead.toKey(id), 'timestamp')
    return at === null ? undefined : Number(at)
  }

  return {
    queueName,
    async sample () {
      const [counts, deadLetters, oldestAt] = await redisWithin(Promise.all([
        main.getJobCounts(...SAMPLED_STATES),
        // Dead letters wait in a list no worker reads, the oldest at its tail.
        dead.getJobCountByTypes('wait'),
        oldestWaiting()
      ]), timeoutMs)
      const states = Object.fromEntries(SAMPLED_STATES.map((state) => [state, counts[state] ?? 0])) as Record<SampledState, number>
      const sample: QueueSample = { queueName, states, deadLetters }
      if (oldestAt !== undefined) sample.oldestDeadLetterAgeSeconds = Math.max(0, (Date.now() - oldestAt) / 1000)
      return sample
    },
    async ping () {
      return await pingWithin(connection.client, timeoutMs)
    },
    async close () {
      await queues.close()
    }
  }
}
