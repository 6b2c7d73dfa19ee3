/** The TypeBox schemas that several options share, so each rule is written once. */
import { Type, type SchemaOptions, type TInteger, type TString, type TUnsafe } from '@sinclair/typebox'

/** BullMQ refuses ':' in a queue name (it separates the parts of every key). */
export const QUEUE_NAME_PATTERN = '^[^:]+$'
/** A retry step is at most a day. */
export const MAX_RETRY_STEP_MS = 86_400_000

export const Whole = (minimum: number, maximum?: number, options: SchemaOptions = {}): TInteger =>
  Type.Integer(maximum === undefined ? { ...options, minimum } : { ...options, minimum, maximum })

export const QueueName = (): TString => Type.String({ pattern: QUEUE_NAME_PATTERN })
export const Prefix = (): TString => Type.String({ minLength: 1 })
export const RetrySchedule = () => Type.Array(Whole(0, MAX_RETRY_STEP_MS))

/**
 * A value no JSON schema describes (a client, a function, a logger): typed as `T` for TypeScript, accepted
 * as is by the schema and checked by hand where it is used, with a message that says what it must be.
 */
export const Opaque = <T>(options: SchemaOptions = {}): TUnsafe<T> => Type.Unsafe<T>(Type.Unknown(options))

/** Retention as given: every field optional, the defaults fill in the rest. */
export const RetentionSchema = Type.Object({
  /** Completed jobs older than this are removed. @defaultValue 3600 (an hour) */
  completedAgeSeconds: Type.Optional(Whole(1)),
  /** At most this many completed jobs are kept. @defaultValue 1000 */
  completedCount: Type.Optional(Whole(0)),
  /** Finally-failed jobs older than this are removed. @defaultValue 604800 (7 days) */
  failedAgeSeconds: Type.Optional(Whole(1)),
  /** At most this many failed jobs are kept. @defaultValue 10000 */
  failedCount: Type.Optional(Whole(0)),
  /** Dead letters older than this are pruned; 0 keeps them; must exceed `failedAgeSeconds`. @defaultValue 1209600 (14 days) */
  deadAgeSeconds: Type.Optional(Whole(0))
}, { additionalProperties: false })
