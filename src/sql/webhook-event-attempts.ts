/**
 * The attempt log (migration 0013), partitioned by the event's received_at: failed attempts, and the `done` a
 * replay moved a row on from. With each row's own `done` they make the view `webhook_event_attempts`.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../shared/schemas.js'
import { qualify } from '../db/qualify.js'

/** A row of `webhook_event_failures` as pg reads it (bigint ids as text). */
export const WebhookEventFailureRowSchema = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  event_received_at: Type.Date(),
  attempt: Type.Integer(),
  started_at: Nullable(Type.Date()),
  finished_at: Type.Date(),
  status: Type.Union([Type.Literal('failed'), Type.Literal('done')]),
  error_class: Nullable(Type.String()),
  error: Nullable(Type.String()),
  job_id: Nullable(Type.String())
})
export type WebhookEventFailureRow = Static<typeof WebhookEventFailureRowSchema>

/** A row of the attempt log: a failure, or a `done` with no error. */
export type AttemptLogRow = Omit<WebhookEventFailureRow, 'id' | 'event_id' | 'event_received_at'>

/** An event's attempt log over all its deliveries, oldest first: `$1` event. */
export const attemptLog = (schema: string): string =>
  `SELECT attempt, status, started_at, finished_at, error_class, error, job_id FROM ${qualify(schema, 'webhook_event_attempts')}
    WHERE event_id = $1 ORDER BY finished_at, id NULLS LAST`
