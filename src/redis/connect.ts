import { Cluster, Redis, type RedisOptions } from 'ioredis'
import { errors } from '../shared/errors.js'
import { parseRedisTarget, redactUrl, type RedisTarget } from './redis-url.js'

export { redactUrl }

/** A client Anvil talks to: one server or a Redis Cluster. */
export type RedisClient = Redis | Cluster

/** A Redis connection given as a URL (Anvil creates and closes it) or an ioredis client (the caller owns it). */
export type RedisInput = string | RedisClient

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
  const target = parseRedisTarget(url)
  return typeof target === 'string' ? target : undefined
}

export function isCluster (client: RedisClient): client is Cluster {
  return (client as Cluster).isCluster === true
}

/** True when the input names a Redis Cluster (a cluster URL or a Cluster client). */
export function targetsCluster (redis: RedisInput): boolean {
  if (typeof redis !== 'string') return isCluster(redis)
  const target = parseRedisTarget(redis)
  return typeof target !== 'string' && target.cluster
}

/**
 * On a cluster every key of a queue must share one slot, or BullMQ's scripts fail with CROSSSLOT on every
 * add: the prefix needs a hash tag such as `{anvil}`.
 */
export function checkClusterPrefix (redis: RedisInput, prefix: string): void {
  if (targetsCluster(redis) && !/\{[^}]+\}/.test(prefix)) {
    throw new errors.INVALID_OPTIONS(`prefix "${prefix}" needs a hash tag such as {anvil} on a Redis Cluster`)
  }
}

export interface OwnedConnection {
  client: RedisClient
  /** True when Anvil created the client and so must close it. */
  owned: boolean
}

function retriesPerRequest (client: RedisClient): number | null | undefined {
  return isCluster(client) ? client.options.redisOptions?.maxRetriesPerRequest : client.options.maxRetriesPerRequest
}

function createClient (target: RedisTarget, role: ConnectionRole): RedisClient {
  const options: RedisOptions = {
    ...ROLE_OPTIONS[role],
    connectionName: `anvil-${role}`,
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(target.tls ? { tls: {} } : {})
  }
  if (!target.cluster) {
    const [node] = target.nodes as [RedisTarget['nodes'][number]]
    return new Redis({ ...options, host: node.host, port: node.port, db: target.db, retryStrategy })
  }
  const { enableOfflineQueue, ...nodeOptions } = options
  return new Cluster(target.nodes, {
    redisOptions: nodeOptions,
    enableOfflineQueue: enableOfflineQueue ?? true,
    clusterRetryStrategy: retryStrategy,
    // TLS certificates name hosts, while the cluster announces addresses: keep the names.
    ...(target.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {})
  })
}

export function connect (input: RedisInput, role: ConnectionRole, onError?: (err: Error) => void): OwnedConnection {
  if (typeof input !== 'string') {
    if (role === 'worker' && retriesPerRequest(input) !== null) {
      throw new errors.INVALID_OPTIONS('a Redis client given to the worker needs maxRetriesPerRequest: null')
    }
    return { client: input, owned: false }
  }
  const target = parseRedisTarget(input)
  if (typeof target === 'string') throw new errors.INVALID_OPTIONS(`redis ${target}`)
  const client = createClient(target, role)
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
