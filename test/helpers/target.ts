import type { Cluster, Redis } from 'ioredis'
import { TestCluster } from './cluster.js'
import { TestRedis } from './redis.js'

/**
 * The Redis a contract test runs against: one server by default, a real 3-master cluster when
 * ANVIL_TEST_REDIS=cluster. The same test files run on both (npm test runs them twice).
 */
export interface RedisTarget {
  readonly url: string
  /** A connection for BullMQ or ioredis use in the test, closed by stop(). */
  connection (): Redis | Cluster | { url: string, maxRetriesPerRequest: null }
  command (...args: Array<string | number>): Promise<unknown>
  stop (): Promise<void>
}

export const onCluster = process.env.ANVIL_TEST_REDIS === 'cluster'

export async function startTarget (): Promise<RedisTarget> {
  if (onCluster) return await TestCluster.start()
  const redis = await TestRedis.start()
  return Object.assign(redis, { connection: () => ({ url: redis.url, maxRetriesPerRequest: null as null }) })
}
