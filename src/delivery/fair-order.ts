/**
 * Fair order between tenants on the one outbound queue: start-time fair queueing over BullMQ's priorities.
 * Each delivery job gets a tag; workers take the lowest first (BullMQ's `priority`, FIFO among equals). A
 * tenant's jobs are tagged one after another from max(V, its last tag), where V is the lowest tag waiting: a
 * tenant that queued 3,000 jobs holds tags V…V+3,000, and another tenant's next job is tagged V, so it is taken
 * next, not behind the burst. While the queue has nothing waiting every tenant starts again from 0, which keeps
 * tags small; past BullMQ's limit they are held at it (FIFO among those). One script per fan-out, in the queue's
 * hash slot (its keys share the prefix's hash tag), so it runs as is on a Redis Cluster.
 */
import type { Queue } from 'bullmq'
import type { RedisClient } from '../redis/connect.js'

/** BullMQ's highest priority number (2^21 − 1); 0 would mean "no priority", taken before every prioritized job. */
export const MAX_PRIORITY = 2_097_151

/**
 * KEYS[1] the queue's prioritized set (scores are priority × 2^32 + a counter), KEYS[2] the tenants' last tags;
 * ARGV[1] the tenant's field, ARGV[2] how many jobs. Returns the first tag of the run.
 */
const TAG_SCRIPT = `
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local v = 0
if head[2] == nil then
  redis.call('DEL', KEYS[2])
else
  v = math.floor(tonumber(head[2]) / 4294967296) - 1
end
local last = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local start = math.max(v, last)
redis.call('HSET', KEYS[2], ARGV[1], start + tonumber(ARGV[2]))
return start`

export interface FairOrder {
  /** The BullMQ priorities of `count` jobs of `tenant` queued now, in order. */
  priorities (tenant: string | null, count: number): Promise<number[]>
}

export function createFairOrder (client: RedisClient, queue: Queue): FairOrder {
  const keys = [queue.keys.prioritized as string, queue.toKey('anvil-fair')]
  return {
    async priorities (tenant, count) {
      // A field per tenant; the operator's messages (no tenant) have one of their own.
      const field = tenant === null ? '-' : `t:${tenant}`
      const start = Number(await client.eval(TAG_SCRIPT, 2, ...keys, field, String(count)))
      return Array.from({ length: count }, (_, i) => Math.min(MAX_PRIORITY, 1 + start + i))
    }
  }
}
