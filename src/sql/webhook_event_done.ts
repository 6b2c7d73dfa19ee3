/**
 * `webhook_event_done` (migration 0007): a job's `done`, one narrow row per event and job, committed with the
 * handler's writes. Its key lets a job commit its `done` once: a second run's insert is refused, and rolls back.
 */
import pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import { qualify } from './qualify.js'

export const WebhookEventDoneRow = Type.Object({
  event_id: Type.String(),
  job_id: Type.String(),
  attempt: Type.Integer(),
  started_at: Type.Union([Type.Date(), Type.Null()]),
  finished_at: Type.Date(),
  /** From the failures' sequence: the attempt log (the view `webhook_event_attempts`) sorts by it. */
  id: Type.String()
})
export type WebhookEventDoneRow = Static<typeof WebhookEventDoneRow>

/** The key's name: the error a second `done` of a job raises names it. */
export const DONE_ONCE = 'webhook_event_done_once'

export interface DoneMark {
  eventId: string
  jobId: string
  attempt: number
  startedAt?: Date
}

/**
 * The mark, its values inlined as escaped literals: it goes in one round trip with the statements before it
 * and the commit (the simple protocol takes no parameters).
 */
export const markDone = (schema: string, mark: DoneMark): string => {
  const began = mark.startedAt === undefined ? 'NULL' : `${pg.escapeLiteral(mark.startedAt.toISOString())}::timestamptz`
  return `INSERT INTO ${qualify(schema, 'webhook_event_done')} (event_id, job_id, attempt, started_at)
    VALUES (${pg.escapeLiteral(mark.eventId)}, ${pg.escapeLiteral(mark.jobId)}, ${Number(mark.attempt)}, ${began})`
}

/** Of the pairs `$1` event ids and `$2` job ids, those whose job has committed its `done`. */
export const doneJobs = (schema: string): string =>
  `SELECT d.event_id AS id, d.job_id FROM ${qualify(schema, 'webhook_event_done')} AS d
    JOIN unnest($1::text[], $2::text[]) AS v(id, job_id) ON d.event_id = v.id AND d.job_id = v.job_id`
