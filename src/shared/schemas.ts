/** The TypeBox schemas that several options share, so each rule is written once. */
import { Type, type TInteger, type TString } from '@sinclair/typebox'

/** BullMQ refuses ':' in a queue name (it separates the parts of every key). */
export const QUEUE_NAME_PATTERN = '^[^:]+$'
/** A retry step is at most a day. */
export const MAX_RETRY_STEP_MS = 86_400_000

export const Whole = (minimum: number, maximum?: number): TInteger =>
  Type.Integer(maximum === undefined ? { minimum } : { minimum, maximum })

export const QueueName = (): TString => Type.String({ pattern: QUEUE_NAME_PATTERN })
export const Prefix = (): TString => Type.String({ minLength: 1 })
export const RetrySchedule = () => Type.Array(Whole(0, MAX_RETRY_STEP_MS))

/** Retention as given: every field optional, the defaults fill in the rest. */
export const RetentionSchema = Type.Object({
  completedAgeSeconds: Type.Optional(Whole(1)),
  completedCount: Type.Optional(Whole(0)),
  failedAgeSeconds: Type.Optional(Whole(1)),
  failedCount: Type.Optional(Whole(0)),
  deadAgeSeconds: Type.Optional(Whole(0))
}, { additionalProperties: false })
