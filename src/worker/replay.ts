/**
 * Replay is its own module and starts no worker: importing it cannot start a processing loop.
 * A replay is not a redelivery: it bypasses the dedupe key that the original delivery still holds.
 */
import { Job } from 'bullmq'
import { DEFAULT_QUEUE_NAME, JOB_NAME, REPLAY_JOB_PREFIX } from '../shared/constants.js'
import { labelsOf, publish } from '../shared/diagnostics.js'
import type { DeadLetterData } from './dead-letter.js'
import { openQueues } from '../queue/open-queues.js'
import { errors } from '../shared/errors.js'
import type { WebhookJobData } from '../queue/job-data.js'
import { DEFAULT_QUEUE_SETTINGS, jobOptions } from '../queue/queue-settings.js'
import type { RedisInput } from '../redis/connect.js'
import { checkedPrefix } from '../redis/checked-prefix.js'
import { compileCheck, throwInvalid } from '../shared/validate.js'
import { Type, type Static } from '@sinclair/typebox'
import { InboundQueue, Opaque, RetentionSchema, Whole } from '../shared/schemas.js'

export const ReplayOptionsSchema = Type.Object({
  /** A Redis URL (Anvil connects and closes) or an ioredis client (left open). */
  redis: Opaque<RedisInput>(),
  ...InboundQueue(),
  /** Retention for the replayed jobs (what is not given keeps its default); the retry schedule comes from the dead job itself. */
  retention: Type.Optional(RetentionSchema)
}, { additionalProperties: false })

export type ReplayOptions = Static<typeof ReplayOptionsSchema>

const checkOptions = compileCheck(ReplayOptionsSchema)

export interface ReplayResult {
  deadLetterId: string
  jobId: string
  /**
   * False when this dead letter had already been replayed: `jobId` is that earlier replay. Of concurrent
   * replays of one letter, exactly one says true.
   */
  replayedNow: boolean
}

export interface DeadLetter {
  id: string
  data: DeadLetterData
}

export const BulkReplayOptionsSchema = Type.Object({
  /** Only dead letters for which this returns true. @defaultValue all */
  filter: Type.Optional(Opaque<(letter: DeadLetter) => boolean>()),
  /** At most this many replays. @defaultValue no limit */
  limit: Type.Optional(Whole(0, undefined, { errorMessage: 'must be a whole number >= 0' }))
}, { additionalProperties: false })

export type BulkReplayOptions = Static<typeof BulkReplayOptionsSchema>

const checkBulk = compileCheck(BulkReplayOptionsSchema)

export interface Replayer {
  replayDeadLetter (id: string): Promise<ReplayResult>
  replayDeadLetters (options?: BulkReplayOptions): Promise<ReplayResult[]>
  /** Dead letters not yet replayed, oldest first. */
  listDeadLetters (options?: { limit?: number, includeReplayed?: boolean }): Promise<DeadLetter[]>
  close (): Promise<void>
}

const PAGE = 200
/** How long a replay is remembered when dead letters are kept for ever (deadAgeSeconds 0): a year. */
const REPLAY_MARK_SECONDS = 365 * 24 * 60 * 60

export function createReplayer (options: ReplayOptions): Replayer {
  const prefix = checkedPrefix(options, checkOptions)
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME
  const queues = openQueues<WebhookJobData, DeadLetterData>(options.redis, 'control', { queueName, prefix })
  const { connection, main, dead } = queues
  const retention = { ...DEFAULT_QUEUE_SETTINGS.retention, ...options.retention }

  async function replay (letter: Job<DeadLetterData>): Promise<ReplayResult> {
    const deadLetterId = letter.id as string
    if (letter.data.replayedAs !== undefined) {
      return { deadLetterId, jobId: letter.data.replayedAs, replayedNow: false }
    }
    // The replay's id derives from the dead letter's: concurrent replays collapse into one live job.
    const jobId = REPLAY_JOB_PREFIX + deadLetterId
    const original = letter.data.job
    const settings = { ...DEFAULT_QUEUE_SETTINGS, retrySchedule: original.retry, retention }
    // The dedupe key outlives the replayed job: a crash before the letter is marked, then a later replay
    // after retention removed the job, still finds it and makes no second live job.
    const ttlMs = 1000 * (retention.deadAgeSeconds > 0 ? retention.deadAgeSeconds : REPLAY_MARK_SECONDS)
    await main.add(JOB_NAME, { ...original, replayOf: deadLetterId }, { ...jobOptions(settings), jobId, deduplication: { id: jobId, ttl: ttlMs } })
    // The add answers every concurrent replay with the same id, made or found: of those, the one that sets
    // this mark first made the replay. Set after the add, so a crash in between leaves nothing claimed. (Should
    // the dedupe key above be deleted by hand while the mark lives, a later replay makes a job and says false.)
    const replayedNow = await connection.client.set(dead.toKey(`replayed:${deadLetterId}`), jobId, 'PX', ttlMs, 'NX') === 'OK'
    // Counted once the claim is made, so that a letter pruned before the update below is still counted.
    if (replayedNow) publish('replayed', () => ({ ...labelsOf(original), deadLetterId, jobId }))
    // Every caller marks the letter (the same job id), so a crash after the claim still leaves it marked.
    await letter.updateData({ ...letter.data, replayedAs: jobId, replayedAt: Date.now() })
    return { deadLetterId, jobId, replayedNow }
  }

  /** Dead letters oldest first; they wait in a list that no worker reads. */
  async function * eachDeadLetter (includeReplayed: boolean): AsyncGenerator<Job<DeadLetterData>> {
    for (let start = 0; ; start += PAGE) {
      const page = await dead.getJobs(['wait'], start, start + PAGE - 1, true)
      for (const letter of page) {
        if (letter === undefined || letter === null) continue
        if (includeReplayed || letter.data.replayedAs === undefined) yield letter
      }
      if (page.length < PAGE) return
    }
  }

  return {
    async replayDeadLetter (id) {
      const letter = await Job.fromId<DeadLetterData>(dead, id)
      if (letter === undefined) throw new errors.DEAD_LETTER_NOT_FOUND(id)
      return await replay(letter)
    },
    async replayDeadLetters (bulk = {}) {
      throwInvalid(checkBulk(bulk))
      const { filter, limit = Number.POSITIVE_INFINITY } = bulk
      const results: ReplayResult[] = []
      if (limit === 0) return results
      for await (const letter of eachDeadLetter(false)) {
        if (filter !== undefined && !filter({ id: letter.id as string, data: letter.data })) continue
        results.push(await replay(letter))
        if (results.length >= limit) break
      }
      return results
    },
    async listDeadLetters ({ limit = Number.POSITIVE_INFINITY, includeReplayed = false } = {}) {
      const found: DeadLetter[] = []
      if (limit <= 0) return found
      for await (const letter of eachDeadLetter(includeReplayed)) {
        found.push({ id: letter.id as string, data: letter.data })
        if (found.length >= limit) break
      }
      return found
    },
    async close () {
      await queues.close()
    }
  }
}

/** One-shot helpers for scripts: connect, replay, close. */
export async function replayDeadLetter (id: string, options: ReplayOptions): Promise<ReplayResult> {
  const replayer = createReplayer(options)
  try {
    return await replayer.replayDeadLetter(id)
  } finally {
    await replayer.close()
  }
}

export async function replayDeadLetters (options: ReplayOptions & BulkReplayOptions): Promise<ReplayResult[]> {
  const { filter, limit, ...connection } = options
  const replayer = createReplayer(connection)
  try {
    return await replayer.replayDeadLetters({ filter, limit })
  } finally {
    await replayer.close()
  }
}
