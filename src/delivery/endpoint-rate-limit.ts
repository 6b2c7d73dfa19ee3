/**
 * An optional per-endpoint rate limit (deliveries per second), enforced across processes with
 * rate-limiter-flexible on the workers' Redis. A job over the limit is put back as delayed, not failed.
 */
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import type { RedisClient } from '../redis/connect.js'

export interface EndpointRateLimit {
  /** Undefined when the delivery may go now, else the time (ms since the epoch) to try again. */
  take (endpointId: string, perSecond: number, now?: number): Promise<number | undefined>
}

export function createEndpointRateLimit (client: RedisClient, keyPrefix: string): EndpointRateLimit {
  // One limiter per rate: the points are the limiter's, the key is the endpoint.
  const limiters = new Map<number, RateLimiterRedis>()
  const limiterFor = (perSecond: number): RateLimiterRedis => {
    let limiter = limiters.get(perSecond)
    if (limiter === undefined) {
      limiter = new RateLimiterRedis({ storeClient: client, keyPrefix: `${keyPrefix}:outbound:rate:${perSecond}`, points: perSecond, duration: 1 })
      limiters.set(perSecond, limiter)
    }
    return limiter
  }
  return {
    async take (endpointId, perSecond, now = Date.now()) {
      try {
        await limiterFor(perSecond).consume(endpointId)
        return undefined
      } catch (err) {
        if (err instanceof RateLimiterRes) return now + err.msBeforeNext
        throw err
      }
    }
  }
}
