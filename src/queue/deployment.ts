/**
 * Which deployment a queue belongs to. A deployment's id lives in its database (migration 0004) or, for
 * `anvil dev` without one, in the project's `.anvil/` folder; each queue it consumes names that id in Redis.
 * A process checks the claim before it takes a job, so two deployments on one Redis and one prefix never
 * take each other's jobs: the second one consumes nothing and says whose the queue is.
 */
import type { Database } from '../db/database.js'
import type { RedisClient } from '../redis/connect.js'
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
export async function deploymentIdOf (database: Database): Promise<string> {
  const { rows } = await database.pool.query<{ id: string }>(sql.id(database.schema))
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

/** Claims each queue for the deployment; the first queue another deployment owns, else undefined. */
export async function claimQueues (redis: RedisClient, claim: QueueClaim): Promise<ForeignQueue | undefined> {
  for (const queue of claim.queues) {
    const owner = await redis.eval(CLAIM_SCRIPT, 1, ownerKey(claim.prefix, queue), claim.deployment, ...(claim.adopt ?? [])) as string
    if (owner !== claim.deployment) return { queue: `${claim.prefix}:${queue}`, owner }
  }
  return undefined
}
