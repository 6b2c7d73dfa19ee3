/**
 * The CLI's side of src/queue/deployment.ts: before a process takes (or, for `anvil dev` and `anvil serve`,
 * adds) a job, it claims the queues for its deployment, and stops with one line when another deployment
 * owns one. Without a database `anvil worker` and `anvil serve` cannot tell deployments apart: they claim nothing.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { openDatabase } from '../src/db/database.js'
import { requireMigrated } from '../src/db/require-migrated.js'
import { newId } from '../src/outbox/ids.js'
import { claimOrRefuse, claimQueues, deploymentIdOf, foreignQueue } from '../src/queue/deployment.js'
import { connect, disconnect, redactUrl } from '../src/redis/connect.js'
import { DEFAULT_PREFIX } from '../src/shared/constants.js'
import { errors } from '../src/shared/errors.js'
import type { Lifecycle } from './lifecycle.js'

/** The file in `anvil dev`'s `.anvil/` folder that holds the project's deployment id. */
export const PROJECT_ID_FILE = 'deployment'
/** Between tries while Redis or PostgreSQL does not answer yet. */
const RETRY_MS = 1000

export interface Binding {
  redisUrl: string
  prefix?: string
  queues: string[]
  /** The deployment's database; its id is the deployment's. */
  database?: { url: string, schema?: string }
  /** `anvil dev`'s `.anvil/` folder: the project's id without a database, and the one it takes over with one. */
  projectDir?: string
}

function readProjectId (dir: string): string | undefined {
  try { return readFileSync(join(dir, PROJECT_ID_FILE), 'utf8').trim() } catch { return undefined }
}

function writeProjectId (dir: string, id: string): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, PROJECT_ID_FILE), `${id}\n`)
}

/** The project's id from its `.anvil/` folder, made on first use. */
function projectId (dir: string): string {
  const kept = readProjectId(dir)
  if (kept !== undefined) return kept
  const id = newId('dep')
  writeProjectId(dir, id)
  return id
}

/** The project's id before this run, and the database's written in its place, so a later run without the database is the same deployment. */
function takeOverProject (dir: string, id: string): string[] {
  const earlier = readProjectId(dir)
  writeProjectId(dir, id)
  return earlier === undefined || earlier === id ? [] : [earlier]
}

async function claimOnce (binding: Binding): Promise<string> {
  const prefix = binding.prefix ?? DEFAULT_PREFIX
  const database = binding.database === undefined ? undefined : openDatabase(binding.database.url, { schema: binding.database.schema, max: 1 })
  const redis = connect(binding.redisUrl, 'control')
  try {
    const redisLabel = redactUrl(binding.redisUrl)
    if (database !== undefined) {
      await requireMigrated(database)
      const deployment = await deploymentIdOf(database)
      const adopt = binding.projectDir === undefined ? [] : takeOverProject(binding.projectDir, deployment)
      await claimOrRefuse(redis.client, {
        prefix, queues: binding.queues, deployment, redisLabel, adopt,
        fix: 'give each deployment its own ANVIL_PREFIX, or set ANVIL_DATABASE_URL to the database that owns it'
      })
      return deployment
    }
    const deployment = projectId(binding.projectDir as string)
    const foreign = await claimQueues(redis.client, { prefix, queues: binding.queues, deployment })
    if (foreign === undefined) return deployment
    throw foreignQueue(foreign, redisLabel, `not to this project's (${deployment}): none of its jobs is taken here; give each project its own ANVIL_PREFIX, or its own Redis (REDIS_URL)`)
  } finally {
    await disconnect(redis)
    await database?.close()
  }
}

/**
 * Claims the queues, trying again while Redis or PostgreSQL does not answer. True once they are this
 * deployment's; false when the process is shutting down first; throws FOREIGN_QUEUE, or NOT_MIGRATED.
 */
export async function bindQueues (binding: Binding, log: Logger, life: Lifecycle): Promise<boolean> {
  if (binding.database === undefined && binding.projectDir === undefined) return true
  const stop = new AbortController()
  life.add('queue claim', async () => stop.abort())
  for (let tries = 1; ; tries++) {
    try {
      const deployment = await claimOnce(binding)
      log.info({ deployment, prefix: binding.prefix ?? DEFAULT_PREFIX, queues: binding.queues }, 'anvil: the queues are claimed for this deployment')
      return true
    } catch (err) {
      if (err instanceof errors.FOREIGN_QUEUE || err instanceof errors.INVALID_CONFIG || err instanceof errors.NOT_MIGRATED) throw err
      if (tries === 1) log.warn({ err: (err as Error).message }, 'anvil: waiting for Redis and PostgreSQL to claim the queues; nothing is consumed until then')
    }
    try {
      await sleep(RETRY_MS, undefined, { signal: stop.signal })
    } catch {
      return false
    }
  }
}
