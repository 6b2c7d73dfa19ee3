/**
 * Erasure in the inbound journal: the events of a subject, a batch at a time, with their failure log rows, their
 * effects, their rows in the PostgreSQL queue and their jobs in Redis (a retry still waiting, a dead letter). Each
 * batch's jobs go first, then its rows in one short transaction: a Redis failure leaves the batch to a second call.
 */
import type { Queue } from 'bullmq'
import { inTransaction, type Database } from '../db/database.js'
import { deadLetterId } from '../worker/dead-letter.js'
import * as sql from '../sql/erasure/journal-erasure.js'
import { createErasureAudit, type ErasureAuditLog } from './erasure-audit.js'
import { DEFAULT_ERASURE_BATCH, type SubjectErasure } from './erasure-schemas.js'

export type JournalSubjectCounts = Pick<SubjectErasure, 'events' | 'eventAttempts' | 'eventJobs'>

export interface JournalErasure {
  subject (subject: string): Promise<JournalSubjectCounts>
  /** The audit in the journal's database, for a deployment without outgoing webhooks. */
  audit: ErasureAuditLog
}

/** Removes job `id` from `queue` if it is there and not running: 1, else 0. */
async function removed (queue: Queue, id: string): Promise<number> {
  if (await queue.getJobState(id) === 'unknown') return 0
  return await queue.remove(id) === 1 ? 1 : 0
}

export function createJournalErasure (db: Database, queues: { main: Queue, dead: Queue }, batch = DEFAULT_ERASURE_BATCH): JournalErasure {
  const s = db.schema
  return {
    audit: createErasureAudit(db),
    async subject (subject) {
      const counts: JournalSubjectCounts = { events: 0, eventAttempts: 0, eventJobs: 0 }
      for (;;) {
        const { rows } = await db.pool.query<{ id: string, received_at: Date, job_id: string | null }>(sql.subjectBatch(s), [subject, batch])
        if (rows.length === 0) return counts
        const ids = rows.map((row) => row.id)
        const at = rows.map((row) => row.received_at)
        const logged = await db.pool.query<{ job_id: string }>(sql.jobsOf(s), [ids, at])
        const jobs = [...new Set([...rows.flatMap((row) => row.job_id === null ? [] : [row.job_id]), ...logged.rows.map((row) => row.job_id)])]
        for (const job of jobs) counts.eventJobs += await removed(queues.main, job) + await removed(queues.dead, deadLetterId(job))
        await inTransaction(db.pool, async (client) => {
          counts.eventAttempts += (await client.query(sql.deleteAttempts(s), [ids, at])).rowCount ?? 0
          await client.query(sql.deleteEffects(s), [ids])
          await client.query(sql.deleteQueued(s), [ids])
          counts.events += (await client.query(sql.deleteEvents(s), [ids, at])).rowCount ?? 0
        })
        if (rows.length < batch) return counts
      }
    }
  }
}
