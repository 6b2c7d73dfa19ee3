/**
 * Failed attempts, one row each. With the done marks (webhook_event_done) they make the attempt log, the view
 * `webhook_event_attempts`, ordered by the id both take from one sequence.
 */
import { qualify } from './qualify.js'

/** An event's attempt log, oldest first: `$1` event. */
export const attemptLog = (schema: string): string =>
  `SELECT attempt, status, started_at, finished_at, error_class, error, job_id FROM ${qualify(schema, 'webhook_event_attempts')}
    WHERE event_id = $1 ORDER BY finished_at, id`
