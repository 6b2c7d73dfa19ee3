/**
 * Which deployment a queue belongs to. A deployment's id lives in its database (migration 0004) or, for
 * `anvil dev` without one, in the project's `.anvil/` folder; each queue it consumes names that id in Redis.
 * A process checks the claim before it takes (or adds) a job, so two deployments on one Redis and one prefix
 * never take each other's jobs: the second one consumes nothing and says whose the queue is. The CLI
 * (cli/deployment.ts) and the library (`createWorker` with a journal, `createDeliveryWorker` on a database's
 * store, `createOutbound`) claim through `claimForDatabase`, with the same error.
 */
import type pg from 'pg'
import type { Database } from '../db/database.js'
import { redactUrl, type RedisClient, type RedisInput } from '../redis/connect.js'
import { errors } from '../shared/errors.js'
import * as sql from '../sql/deployment.js'

/**
 * Claims the key where nobody has (an upgraded deployment's first start keeps the jobs already queued), takes
 * it over from an id in ARGV[2..] (the caller's own earlier ids), and answers the owner either way.
 */
const CLAIM_SCRIPT = `
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then return owner end
local free = not owner
for i = 2, #ARGV do if owner == ARGV[i] then free = true end end
if free then redis.call('SET', KEYS[1], ARGV[1]) return ARGV[1] end
return owner`

/** Beside BullMQ's own keys of the queue (no job id is `deployment`), so obliterating the queue frees it too. */
export function ownerKey (prefix: string, queueName: string): string {
  return `${prefix}:${queueName}:deployment`
}

/** This database's deployment id (migration 0004: callers check the schema first, src/db/require-migrated.ts). */
/** Read on `client` when given: a caller inside a transaction must not wait for a second pool connection. */
export async function deploymentIdOf (database: Database, client: Pick<pg.ClientBase, 'query'> = database.pool): Promise<string> {
  const { rows } = await client.query<{ id: string }>(sql.id(database.schema))
  const id = rows[0]?.id
  if (id === undefined) throw new errors.INVALID_CONFIG(`schema "${database.schema}" has no deployment id: run anvil migrate`)
  return id
}

export interface QueueClaim {
  prefix: string
  queues: string[]
  deployment: string
  /** Earlier ids of this same deployment whose claims it takes over. */
  adopt?: string[]
}

export interface ForeignQueue {
  queue: string
  owner: string
}

/** The remedy the library's error names; the CLI names its variables instead. */
export const LIBRARY_FIX = 'give each deployment its own `prefix` (or Redis), or open it on the database that owns the queue'

export interface DeploymentClaim extends QueueClaim {
  /** Where Redis is, as the error shows it (a URL without its password). */
  redisLabel: string
  /** What to do about it, as the error says. @defaultValue LIBRARY_FIX */
  fix?: string
}

/**
 * Claims the queues for a database's deployment (its id, `deploymentIdOf`); throws FOREIGN_QUEUE when another
 * deployment owns one, before anything was taken or added.
 */
export async function claimOrRefuse (redis: RedisClient, claim: DeploymentClaim): Promise<void> {
  const foreign = await claimQueues(redis, claim)
  if (foreign === undefined) return
  throw foreignQueue(foreign, claim.redisLabel, `not to this database's (${claim.deployment}): none of its jobs is taken here; ${claim.fix ?? LIBRARY_FIX}`)
}

export function foreignQueue (foreign: ForeignQueue, redisLabel: string, ours: string): Error {
  return new errors.FOREIGN_QUEUE(`${foreign.queue} on ${redisLabel}`, foreign.owner, ours)
}

/** How an error names a Redis: its URL without the password, or a client's host and port. */
export function redisLabel (redis: RedisInput): string {
  if (typeof redis === 'string') return redactUrl(redis)
  const options = (redis as { options?: { host?: string, port?: number } }).options
  return options?.host === undefined ? 'the Redis client given' : `redis://${options.host}:${String(options.port ?? 6379)}`
}

/** Claims each queue for the deployment; the first queue another deployment owns, else undefined. */
export async function claimQueues (redis: RedisClient, claim: QueueClaim): Promise<ForeignQueue | undefined> {
  for (const queue of claim.queues) {
    const owner = await redis.eval(CLAIM_SCRIPT, 1, ownerKey(claim.prefix, queue), claim.deployment, ...(claim.adopt ?? [])) as string
    if (owner !== claim.deployment) return { queue: `${claim.prefix}:${queue}`, owner }
  }
  return undefined
}
