import { Redis, type RedisOptions } from 'ioredis'
import { errors } from './errors.js'

/** A Redis connection given as a URL (Anvil creates and closes it) or an ioredis client (the caller owns it). */
export type RedisInput = string | Redis

/**
 * - `producer`: fails fast while Redis is down, so ingress can answer 503 at once instead of queueing the
 *   command in memory, where a crash would lose it after the 202.
 * - `worker`: BullMQ's blocking commands require `maxRetriesPerRequest: null`.
 * - `control`: one-off commands (replay, health): queued until connected, retried once.
 */
export type ConnectionRole = 'producer' | 'worker' | 'control'

const ROLE_OPTIONS: Record<ConnectionRole, RedisOptions> = {
  producer: { enableOfflineQueue: false, maxRetriesPerRequest: 1 },
  worker: { maxRetriesPerRequest: null },
  control: { maxRetriesPerRequest: 1 }
}

/** Reconnect forever, backing off to 2 s, so a Redis restart never needs an Anvil restart. */
function retryStrategy (times: number): number {
  return Math.min(times * 100, 2000)
}

/** What is wrong with a Redis URL, or undefined when it is usable. */
export function redisUrlProblem (url: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `is not a URL: ${redactUrl(url)}`
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    return `must start with redis:// or rediss://, got ${parsed.protocol}//`
  }
  return undefined
}

export function parseRedisUrl (url: string): URL {
  const problem = redisUrlProblem(url)
  if (problem !== undefined) throw new errors.INVALID_CONFIG(`REDIS_URL ${problem}`)
  return new URL(url)
}

/** The URL without its password, for messages. */
export function redactUrl (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return '<unparseable>'
  }
}

export interface OwnedConnection {
  client: Redis
  /** True when Anvil created the client and so must close it. */
  owned: boolean
}

export function connect (input: RedisInput, role: ConnectionRole, onError?: (err: Error) => void): OwnedConnection {
  if (typeof input !== 'string') {
    if (role === 'worker' && input.options.maxRetriesPerRequest !== null) {
      throw new errors.INVALID_OPTIONS('a Redis client given to the worker needs maxRetriesPerRequest: null')
    }
    return { client: input, owned: false }
  }
  const problem = redisUrlProblem(input)
  if (problem !== undefined) throw new errors.INVALID_OPTIONS(`redis ${problem}`)
  const client = new Redis(input, { ...ROLE_OPTIONS[role], retryStrategy, connectionName: `anvil-${role}` })
  // ioredis emits 'error' on every failed reconnect; without a listener it prints its own warning each time.
  client.on('error', onError ?? (() => {}))
  return { client, owned: true }
}

export async function disconnect (connection: OwnedConnection): Promise<void> {
  if (!connection.owned) return
  try {
    await connection.client.quit()
  } catch {
    connection.client.disconnect()
  }
}
