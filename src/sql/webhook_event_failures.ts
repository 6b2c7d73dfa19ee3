/**
 * Failed attempts, one row each. With the done marks (webhook_event_done) they make the attempt log, the view
 * `webhook_event_attempts`, ordered by the id both take from one sequence.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../shared/schemas.js'
import { qualify } from './qualify.js'

/** A row of `webhook_event_failures` as pg reads it (bigint ids as text). */
export const WebhookEventFailureRowSchema = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  attempt: Type.Integer(),
  started_at: Nullable(Type.Date()),
  finished_at: Type.Date(),
  status: Type.Literal('failed'),
  error_class: Nullable(Type.String()),
  error: Nullable(Type.String()),
  job_id: Nullable(Type.String())
})
export type WebhookEventFailureRow = Static<typeof WebhookEventFailureRowSchema>

/** A row of the attempt log: a failure, or a done mark (webhook_event_done) with no error. */
export type AttemptLogRow = Omit<WebhookEventFailureRow, 'id' | 'event_id' | 'status'> & { status: 'done' | 'failed' }

/** An event's attempt log, oldest first: `$1` event. */
export const attemptLog = (schema: string): string =>
  `SELECT attempt, status, started_at, finished_at, error_class, error, job_id FROM ${qualify(schema, 'webhook_event_attempts')}
    WHERE event_id = $1 ORDER BY finished_at, id`
