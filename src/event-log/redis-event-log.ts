/**
 * Without a database the event log is the dead letters in Redis: listed, shown, counted and replayed with the
 * same filters (src/event-log/event-filter.ts), and a bulk replay is paced and cancellable too, its progress
 * kept in this process.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Job } from 'bullmq'
import { DEFAULT_PREFIX, DEFAULT_QUEUE_NAME } from '../shared/constants.js'
import { decodeCursor, encodeCursor } from '../paging/cursor.js'
import { errors } from '../shared/errors.js'
import { openQueues } from '../queue/open-queues.js'
import type { WebhookJobData } from '../queue/job-data.js'
import { createReplayer, type DeadLetter } from '../worker/replay.js'
import type { DeadLetterData } from '../worker/dead-letter.js'
import { matchesLetter, resolveFilter, type ResolvedFilter } from './event-filter.js'
import { journalPageSize, type EventDetail, type EventItem, type EventPage } from './event-queries.js'
import type { EventLog, EventLogOptions } from './event-log.js'
import { deadLetterStats } from './journal-stats.js'
import type { ReplayRunStatus } from './replay-runs.js'

function itemOf (letter: DeadLetter): EventItem {
  const { job, failureContext } = letter.data
  return {
    id: letter.id,
    source: job.source,
    provider: job.provider ?? null,
    eventType: job.eventType ?? null,
    status: 'dead',
    attempts: failureContext.attempts,
    receivedAt: new Date(job.receivedAt).toISOString(),
    lastError: failureContext.lastError,
    errorClass: failureContext.reason
  }
}

function matches (filter: ResolvedFilter, letter: DeadLetter): boolean {
  const { job, failureContext } = letter.data
  return matchesLetter(filter, { ...job, payload: Buffer.from(job.payload, 'base64'), reason: failureContext.reason })
}

export function redisEventLog (options: EventLogOptions): EventLog {
  const names = { queueName: options.queueName ?? DEFAULT_QUEUE_NAME, prefix: options.prefix ?? DEFAULT_PREFIX }
  const queues = openQueues<WebhookJobData, DeadLetterData>(options.redis, 'control', names)
  const replayer = createReplayer({ redis: queues.connection.client, ...names, retention: options.retention })
  /** A run in this process: its letters (matched at its start) and rate, so a resume takes the same ones. */
  type Run = ReplayRunStatus & { done: Promise<void>, letters: DeadLetter[], rate?: number }
  const runs = new Map<string, Run>()

  async function matching (filter: unknown): Promise<DeadLetter[]> {
    const resolved = resolveFilter(filter)
    return (await replayer.listDeadLetters()).filter((letter) => matches(resolved, letter))
  }

  async function page (filter: unknown, request: { limit?: number, cursor?: string } = {}): Promise<EventPage> {
    const limit = journalPageSize(request.limit)
    const offset = request.cursor === undefined || request.cursor === '' ? 0 : decodeCursor(request.cursor, ['number'])[0] as number
    const all = await matching(filter)
    const items = all.slice(offset, offset + limit).map(itemOf)
    return { items, next: offset + limit < all.length ? encodeCursor([offset + limit]) : null }
  }

  function run (id: string): Run {
    const found = runs.get(id)
    if (found === undefined) throw new errors.REPLAY_RUN_NOT_FOUND(id)
    return found
  }

  const snapshot = (r: ReplayRunStatus): ReplayRunStatus => ({ id: r.id, matched: r.matched, replayed: r.replayed, state: r.state })

  async function replayAll (state: ReplayRunStatus, letters: DeadLetter[], rate: number | undefined): Promise<void> {
    const began = Date.now()
    for (const letter of letters) {
      if (state.state !== 'running') return
      if ((await replayer.replayDeadLetter(letter.id)).replayedNow) state.replayed++
      if (rate !== undefined) {
        const wait = began + (state.replayed / rate) * 1000 - Date.now()
        if (wait > 0) await sleep(wait)
      }
    }
    state.state = 'done'
  }

  async function launch (state: ReplayRunStatus, letters: DeadLetter[], rate: number | undefined): Promise<void> {
    await replayAll(state, letters, rate).catch((err: Error) => {
      state.state = 'cancelled'
      state.error = err.message
    })
  }

  return {
    kind: 'dead-letters',
    list: page,
    async get (id) {
      const letter = await Job.fromId<DeadLetterData>(queues.dead, id)
      if (letter === undefined) throw new errors.DEAD_LETTER_NOT_FOUND(id)
      const payload = Buffer.from(letter.data.job.payload, 'base64')
      const text = payload.toString('utf8')
      const utf8 = Buffer.from(text, 'utf8').equals(payload)
      const detail: EventDetail = {
        ...itemOf({ id, data: letter.data }),
        payload: utf8 ? text : letter.data.job.payload,
        payloadEncoding: utf8 ? 'utf8' : 'base64',
        contentType: letter.data.job.contentType ?? null,
        headers: letter.data.job.headers,
        signature: letter.data.job.signature ?? null,
        requestId: letter.data.job.requestId ?? null,
        jobId: letter.data.replayedAs ?? letter.data.originalJobId,
        processedAt: null,
        deliveries: 1,
        replays: letter.data.replayedAs === undefined ? 0 : 1,
        effects: [],
        // A dead letter keeps only its last failure (in lastError and errorClass), not each attempt.
        attemptLog: []
      }
      return detail
    },
    async replay (id) {
      const result = await replayer.replayDeadLetter(id)
      return { id, jobId: result.jobId, replayed: result.replayedNow }
    },
    count: async (filter) => (await matching(filter)).length,
    async startReplay (filter, rate) {
      const letters = await matching(filter)
      const id = randomUUID()
      const state = { id, matched: letters.length, replayed: 0, state: 'running' as ReplayRunStatus['state'] }
      runs.set(id, Object.assign(state, { done: launch(state, letters, rate), letters, rate }))
      return { id, matched: letters.length }
    },
    replayStatus: async (id) => snapshot(run(id)),
    async cancelReplay (id) {
      const r = run(id)
      if (r.state === 'running') r.state = 'cancelled'
      await r.done
      return snapshot(r)
    },
    async resumeReplay (id) {
      const r = run(id)
      if (r.state !== 'cancelled') return snapshot(r)
      r.state = 'running'
      // A letter already replayed answers replayedNow false: the run goes on with the rest of its own.
      r.done = launch(r, r.letters, r.rate)
      return snapshot(r)
    },
    async waitReplay (id) {
      await run(id).done
      return snapshot(run(id))
    },
    deadLetters: async (request) => await page({}, request),
    stats: async () => ({ windowSeconds: 0, byStatus: {}, byProvider: [], byType: [], deadLetters: await deadLetterStats(queues.dead) }),
    async close () {
      for (const r of runs.values()) if (r.state === 'running') r.state = 'cancelled'
      await Promise.all([...runs.values()].map(async (r) => await r.done))
      await replayer.close()
      await queues.close()
    }
  }
}
