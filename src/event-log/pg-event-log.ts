import { openDatabase } from '../db/database.js'
import { openQueues } from '../queue/open-queues.js'
import type { WebhookJobData } from '../queue/job-data.js'
import type { DeadLetterData } from '../worker/dead-letter.js'
import { DEFAULT_QUEUE_SETTINGS } from '../queue/queue-settings.js'
import { DEFAULT_PREFIX, DEFAULT_QUEUE_NAME } from '../shared/constants.js'
import { resolveFilter } from './event-filter.js'
import { getEvent, listEvents } from './event-queries.js'
import { replayEvent, type ReplayTarget } from './event-replay.js'
import type { EventLog, EventLogOptions } from './event-log.js'
import { deadLetterStats, journalStats } from './journal-stats.js'
import { ReplayRuns } from './replay-runs.js'
import { createJournalErasure } from '../erasure/journal-erasure.js'

/** The journal in PostgreSQL; replays go to the queue in Redis. */
export function pgEventLog (options: EventLogOptions & { database: NonNullable<EventLogOptions['database']> }): EventLog {
  const db = openDatabase(options.database, { schema: options.schema })
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME
  const queues = openQueues<WebhookJobData, DeadLetterData>(options.redis, 'control', { queueName, prefix: options.prefix ?? DEFAULT_PREFIX })
  const target: ReplayTarget = { db, queue: options.journalQueue === 'postgres' ? 'postgres' : queues.main, dead: { queue: queues.dead, client: queues.connection.client }, retention: { ...DEFAULT_QUEUE_SETTINGS.retention, ...options.retention } }
  const runs = new ReplayRuns(target)
  return {
    kind: 'journal',
    list: async (filter, page) => await listEvents(db, resolveFilter(filter), page),
    get: async (id) => await getEvent(db, id),
    replay: async (id) => await replayEvent(target, id),
    count: async (filter) => await runs.count(resolveFilter(filter)),
    startReplay: async (filter, rate) => await runs.start(filter, rate),
    replayStatus: async (id) => await runs.get(id),
    cancelReplay: async (id) => await runs.cancel(id),
    resumeReplay: async (id) => await runs.resume(id),
    waitReplay: async (id) => await runs.wait(id),
    deadLetters: async (page) => await listEvents(db, resolveFilter({ status: 'dead' }), page),
    stats: async (windowMs) => ({ ...await journalStats(db, windowMs), deadLetters: await deadLetterStats(queues.dead) }),
    erasure: createJournalErasure(db, queues),
    async close () {
      await runs.close()
      await queues.close()
      await db.close()
    }
  }
}
