/** Erasure in the inbound journal (migration 0025): a subject's events a batch at a time, and what goes with them. */
import { qualify } from '../../db/qualify.js'

/** Up to `$2` events of subject `$1` (webhook_events_subject), with their job. */
export const subjectBatch = (schema: string): string =>
  `SELECT id, received_at, job_id FROM ${qualify(schema, 'webhook_events')} WHERE subject = $1 ORDER BY received_at, id LIMIT $2`

/** The jobs of the attempt log of events `$1` (text[]) received at `$2` (timestamptz[]): a replay's job is another. */
export const jobsOf = (schema: string): string =>
  `SELECT DISTINCT job_id FROM ${qualify(schema, 'webhook_event_failures')}
   WHERE (event_id, event_received_at) IN (SELECT * FROM unnest($1::text[], $2::timestamptz[])) AND job_id IS NOT NULL`

/** The attempt log of events `$1` (text[]) received at `$2` (timestamptz[]) deleted (webhook_event_failures_event). */
export const deleteAttempts = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'webhook_event_failures')} WHERE (event_id, event_received_at) IN (SELECT * FROM unnest($1::text[], $2::timestamptz[]))`

/** The effects of events `$1` (text[]) deleted (webhook_effects_event_id). */
export const deleteEffects = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'webhook_effects')} WHERE event_id = ANY ($1::text[])`

/** Events `$1` (text[]) still in the PostgreSQL queue deleted (a small table: the jobs in flight). */
export const deleteQueued = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'webhook_event_queue')} WHERE event_id = ANY ($1::text[])`

/** The rows of events `$1` (text[]) received at `$2` (timestamptz[]) deleted. */
export const deleteEvents = (schema: string): string =>
  `DELETE FROM ${qualify(schema, 'webhook_events')} WHERE (id, received_at) IN (SELECT * FROM unnest($1::text[], $2::timestamptz[]))`
