/** The TypeBox schemas that several options share, so each rule is written once. */
import { Type, type SchemaOptions, type TInteger, type TSchema, type TString, type TUnsafe, type TNull, type TUnion } from '@sinclair/typebox'

/** BullMQ refuses ':' in a queue name (it separates the parts of every key). */
export const QUEUE_NAME_PATTERN = '^[^:]+$'
/** A retry step is at most a day. */
export const MAX_RETRY_STEP_MS = 86_400_000

/**
 * A key prefix: non-empty, each `{` closed by a `}` around a name. Redis hashes only what stands in the first
 * such pair (a hash tag), so `{x` would quietly spread a queue over a cluster's slots.
 */
export const PREFIX_PATTERN = '^[^{}]+$|^[^{}]*(\\{[^{}]+\\}[^{}]*)+$'
export const PREFIX_RULE = 'whose braces pair up around a name, as in {anvil} (a Redis Cluster hash tag)'
/** Names a source in logs, keys and metrics: printable, one line. */
export const SOURCE_NAME_PATTERN = '^[^\\x00-\\x1f\\x7f]{1,200}$'

/**
 * A PostgreSQL schema name, which Anvil quotes into its statements itself: a plain lower-case identifier of at
 * most 63 bytes (PostgreSQL's limit), so no name can change a statement's meaning.
 */
export const SCHEMA_NAME_PATTERN = '^[a-z_][a-z0-9_]{0,62}$'
export const SCHEMA_NAME_RULE = 'a lower-case SQL identifier (a-z, 0-9, _)'

/** A whole number, never past what a double holds exactly: a larger one is no longer the number typed. */
export const Whole = (minimum: number, maximum = Number.MAX_SAFE_INTEGER, options: SchemaOptions = {}): TInteger =>
  Type.Integer({ ...options, minimum, maximum })

/** Jobs one worker (inbound or delivery) runs at once; past 10,000 is a typo, not a plan. */
export const Concurrency = (): TInteger => Whole(1, 10_000)
/** BullMQ renews a job's lock at half its duration: under 500 ms a busy event loop loses locks to stalls. */
export const LockDurationMs = (): TInteger => Whole(500)
/** How often a worker looks for stalled jobs: under 100 ms the checks crowd Redis. */
export const StalledIntervalMs = (): TInteger => Whole(100)
/** How far a worker's clock may be from Redis's before it takes no jobs (src/redis/clock-guard.ts); 0: no bound; an hour at most. */
export const MaxClockSkewMs = (): TInteger => Whole(0, 3_600_000)

/** Days of history a retention pass keeps (the journal's, the outbox's); 0 keeps everything, 100 years at most. */
export const RetentionDays = (): TInteger => Whole(0, 36_500)

export const QueueName = (): TString => Type.String({ pattern: QUEUE_NAME_PATTERN })
export const Prefix = (): TString => Type.String({ pattern: PREFIX_PATTERN, errorMessage: `must be a non-empty key prefix ${PREFIX_RULE}` })
export const SchemaName = (): TString => Type.String({ pattern: SCHEMA_NAME_PATTERN, errorMessage: `must be ${SCHEMA_NAME_RULE}` })
export const SourceName = (): TString =>
  Type.String({ pattern: SOURCE_NAME_PATTERN, errorMessage: 'must be 1 to 200 characters, none of them a control character (a newline, NUL)' })
/** Where the ingress's queue is, for what reads it (the worker, replay, the event log): both must match the ingress's. */
export const InboundQueue = () => ({
  /** Must match the ingress's. @defaultValue `'webhooks'` */
  queueName: Type.Optional(QueueName()),
  /** Must match the ingress's. @defaultValue `'{anvil}'` */
  prefix: Type.Optional(Prefix())
})
/** The console's address, for the links of operational events (`https://anvil.example.com/admin/console/`). */
export const ConsoleUrl = (): TString => Type.String({ pattern: '^https?://[^\\s#]+$', maxLength: 2000, errorMessage: 'must be an http:// or https:// URL without a fragment' })
/** The most retries a schedule holds: with the first try, a job is tried at most a hundred times. */
export const MAX_RETRIES = 99
export const RetrySchedule = () => Type.Array(Whole(0, MAX_RETRY_STEP_MS), { maxItems: MAX_RETRIES })

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

/** A value or null, as a nullable column reads. */
export const Nullable = <T extends TSchema>(schema: T): TUnion<[T, TNull]> => Type.Union([schema, Type.Null()])
