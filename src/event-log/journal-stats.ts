import type { Queue } from 'bullmq'
import type { Database } from '../db/database.js'
import * as webhookEvents from '../sql/webhook-events.js'

export interface Count { key: string | null, count: number }

export interface DeadLetterStats {
  size: number
  /** Seconds since the oldest waiting dead letter was written; null when there is none. */
  oldestAgeSeconds: number | null
}

export interface EventStats {
  windowSeconds: number
  byStatus: Record<string, number>
  byProvider: Count[]
  byType: Array<Count & { provider: string | null }>
  deadLetters: DeadLetterStats
}

/** The dead-letter queue's size and the age of its oldest letter (letters wait oldest first). */
export async function deadLetterStats (dead: Queue): Promise<DeadLetterStats> {
  const size = await dead.getWaitingCount()
  const [oldest] = size === 0 ? [] : await dead.getJobs(['wait'], 0, 0, true)
  return { size, oldestAgeSeconds: oldest?.timestamp === undefined ? null : Math.max(0, Math.round((Date.now() - oldest.timestamp) / 1000)) }
}

/** Counts by status, provider and type of the events received within the window. */
export async function journalStats (db: Database, windowMs: number): Promise<Omit<EventStats, 'deadLetters'>> {
  const since = new Date(Date.now() - windowMs)
  const { rows } = await db.pool.query<{ status: string, provider: string | null, event_type: string | null, n: string }>(
    webhookEvents.stats(db.schema), [since])
  const byStatus: Record<string, number> = { received: 0, processing: 0, done: 0, failed: 0, dead: 0 }
  const providers = new Map<string | null, number>()
  const types = new Map<string, Count & { provider: string | null }>()
  for (const row of rows) {
    const n = Number(row.n)
    byStatus[row.status] = (byStatus[row.status] ?? 0) + n
    providers.set(row.provider, (providers.get(row.provider) ?? 0) + n)
    const typeKey = JSON.stringify([row.provider, row.event_type])
    const entry = types.get(typeKey) ?? { provider: row.provider, key: row.event_type, count: 0 }
    entry.count += n
    types.set(typeKey, entry)
  }
  const byCount = (a: Count, b: Count): number => b.count - a.count
  return {
    windowSeconds: Math.round(windowMs / 1000),
    byStatus,
    byProvider: [...providers].map(([key, count]) => ({ key, count })).sort(byCount),
    byType: [...types.values()].sort(byCount)
  }
}
