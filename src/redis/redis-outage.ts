/** Whether Redis is there to take a command: the outbox dispatcher holds its messages back while it is not. */
import { NETWORK_ERROR_CODES } from '../shared/network-codes.js'
import { within } from '../time/within.js'
import { isCluster, type RedisClient } from './connect.js'

/** Replies of a Redis that is there but cannot take a write now: out of memory, loading, a replica, no master. */
const UNAVAILABLE_REPLY = /^(OOM|LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|NOREPLICAS)\b/
/** What ioredis and redisWithin say of a connection that is gone, not open yet, or silent. */
const CONNECTION_LOST = /Connection is closed|Stream isn't writeable|did not answer within|Failed to refresh slots cache|max retries per request/i

/** True when commands can go now; ioredis reports a connected cluster as 'connect' until its first slots refresh, as BullMQ allows. */
export function redisReady (client: RedisClient): boolean {
  return client.status === 'ready' || (client.status === 'connect' && isCluster(client))
}

export interface RedisGate {
  ready (): boolean
  /** Resolves true once Redis is ready, or false when `ms` pass first. Waiters share one listener. */
  untilReady (ms: number): Promise<boolean>
  /** True when a failed command was Redis being away (down, unreachable, silent, out of memory, read-only), not the command's fault. */
  outage (err: unknown): boolean
}

export function redisGate (client: RedisClient): RedisGate {
  let nextReady: Promise<true> | undefined
  return {
    ready: () => redisReady(client),
    async untilReady (ms) {
      if (redisReady(client)) return true
      nextReady ??= new Promise<true>((resolve) => client.once('ready', () => {
        nextReady = undefined
        resolve(true)
      }))
      return await within(nextReady, ms, () => false)
    },
    outage (err) {
      if (!redisReady(client)) return true
      const { code, message = '' } = err as { code?: unknown, message?: string }
      return (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) || UNAVAILABLE_REPLY.test(message) || CONNECTION_LOST.test(message)
    }
  }
}
