/**
 * The jobs an operator's hand retry or recover made for a message and an endpoint, each under an id of its own,
 * listed in a Redis set beside the queue's keys: a message re-send reads it to leave alone a delivery still in
 * flight under one of them, which it could not find by its id.
 */
import type { Queue } from 'bullmq'
import type { RedisClient } from '../redis/connect.js'
import type { OutboundJobData } from '../delivery/delivery-job.js'

/** Longer than a job can stay in flight on its schedule; each new job of the pair renews it. */
const HAND_JOBS_TTL_MS = 30 * 24 * 60 * 60 * 1000

/** BullMQ's deduplication id of a pair's hand jobs (retry and recover alike); its key lives until the job finishes. */
export const handDedupeId = (messageId: string, endpointId: string): string => `anvil-hand.${messageId}.${endpointId}`

export interface HandJobs {
  /** Lists `jobId` before it is added, so a re-send that decides meanwhile cannot miss it. */
  note (messageId: string, endpointId: string, jobId: string): Promise<void>
  /** Takes back a listed id that was never added (its add was deduplicated). */
  forget (messageId: string, endpointId: string, jobId: string): Promise<void>
  /** The ids of the pair's hand jobs; those finished or removed since are still listed, and their state says so. */
  ids (messageId: string, endpointId: string): Promise<string[]>
}

export function handJobs (client: RedisClient, queue: Queue<OutboundJobData>): HandJobs {
  const keyOf = (messageId: string, endpointId: string): string => queue.toKey(`anvil-hand:${messageId}.${endpointId}`)
  return {
    async note (messageId, endpointId, jobId) {
      const key = keyOf(messageId, endpointId)
      await client.multi().sadd(key, jobId).pexpire(key, HAND_JOBS_TTL_MS).exec()
    },
    async forget (messageId, endpointId, jobId) {
      await client.srem(keyOf(messageId, endpointId), jobId)
    },
    async ids (messageId, endpointId) {
      return await client.smembers(keyOf(messageId, endpointId))
    }
  }
}
