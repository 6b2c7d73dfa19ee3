/** The ingress's options: the schema, whose `Static<>` is their type, and how they resolve into what the ingress runs on. */
import { Type, type Static, type TObject } from '@sinclair/typebox'
import {
  DEFAULT_BODY_LIMIT, DEFAULT_ENQUEUE_TIMEOUT_MS, DEFAULT_REDIS_URL, DEFAULT_RETENTION, DEFAULT_RETRY_AFTER_SECONDS,
  DEFAULT_SOURCE, MAX_BODY_LIMIT
} from '../shared/constants.js'
import { errors } from '../shared/errors.js'
import { DEFAULT_QUEUE_SETTINGS, deadLetterRetentionProblem, type QueueSettings } from '../queue/queue-settings.js'
import { checkClusterPrefix, redisUrlProblem, type RedisClient, type RedisInput } from '../redis/connect.js'
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { checkTelemetry, type Telemetry } from '../queue/telemetry.js'
import { compileCheck, throwInvalid } from '../shared/validate.js'
import { Opaque, Prefix, QueueName, RetentionSchema, RetrySchedule, SchemaName } from '../shared/schemas.js'
import type { DatabaseInput } from '../db/database.js'
import { endpointProperties, resolveSources, type ResolvedSource } from './source-options.js'

export { SourceSchema, type ResolvedSource, type SourceOptions } from './source-options.js'

/** Where the queue is and how it behaves; with the endpoints, the ingress's options. */
const queueProperties = {
  /** A Redis URL (Anvil connects and closes) or an ioredis client (left open). @defaultValue `'redis://127.0.0.1:6379'` */
  redis: Type.Optional(Opaque<RedisInput>()),
  /** The largest body accepted, in bytes (at most 1 GiB); larger gets 413. @defaultValue 1048576 (1 MiB) */
  bodyLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_BODY_LIMIT })),
  /** @defaultValue `'webhooks'` */
  queueName: Type.Optional(QueueName()),
  /** BullMQ's key prefix; a hash tag keeps a queue in one Redis Cluster slot. @defaultValue `'{anvil}'` */
  prefix: Type.Optional(Prefix()),
  /** How long a delivery is remembered. @defaultValue 259200000 (72 h) */
  dedupeWindowMs: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  /** Delays before each retry, in ms; travels with the job. @defaultValue `[1000, 5000, 30000, 300000]` */
  retrySchedule: Type.Optional(RetrySchedule()),
  /** How long finished jobs and dead letters stay; what is not given keeps its default. */
  retention: Type.Optional(RetentionSchema),
  /** How long Redis has to take an add before the answer is 503. @defaultValue 1500 */
  enqueueTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  /** The `retry-after` of a 503, in seconds. @defaultValue 5 */
  retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  /** Opt-in: answer 202 only once this many replicas have the write (`WAIT`); one Redis server only. @defaultValue off */
  replication: Type.Optional(Type.Object({
    replicas: Type.Integer({ minimum: 1 }),
    timeoutMs: Type.Integer({ minimum: 1 })
  }, { additionalProperties: false })),
  /** BullMQ telemetry (e.g. `new BullMQOtel()`): an `addBulk` span, and each job carries its request's trace context. @defaultValue off */
  telemetry: Type.Optional(Opaque<Telemetry>()),
  /**
   * `{ queue: 'postgres', database }`: accepted events go into the journal's queue in PostgreSQL
   * (`webhook_event_queue`, migration 0016) instead of BullMQ, for workers given `journal: { queue: 'postgres' }`
   * on the same database and schema. @defaultValue BullMQ
   */
  journal: Type.Optional(Type.Object({
    queue: Type.Literal('postgres'),
    /** A PostgreSQL URL (Anvil makes a pool and ends it) or a `pg.Pool` (left open). */
    database: Opaque<DatabaseInput>(),
    /** @defaultValue `'anvil'` */
    schema: Type.Optional(SchemaName())
  }, { additionalProperties: false }))
}

/**
 * The ingress's options; the `anvil` plugin's add `connectTimeoutMs` (plugins/ingress.ts). Typed by name, so
 * the declarations keep each field's documentation.
 */
export const ingressProperties: typeof endpointProperties & typeof queueProperties = { ...endpointProperties, ...queueProperties }

export const IngressOptionsSchema: TObject<typeof ingressProperties> = Type.Object(ingressProperties, { additionalProperties: false })

export type IngressOptions = Static<typeof IngressOptionsSchema>

const checkIngress = compileCheck(IngressOptionsSchema)

export interface ResolvedIngress {
  redis: RedisInput
  /** At least one; the first is the default for `accept` without a source. */
  sources: ResolvedSource[]
  /** The source name `app.anvil.enqueue` uses by default. */
  source: string
  bodyLimit: number
  settings: QueueSettings
  enqueueTimeoutMs: number
  retryAfterSeconds: number
  replication?: { replicas: number, timeoutMs: number }
  telemetry?: Telemetry
  /** The journal's queue in PostgreSQL, when events go there instead of BullMQ. */
  journal?: { queue: 'postgres', database: DatabaseInput, schema?: string }
}

function isRedisClient (value: unknown): value is RedisClient {
  return typeof value === 'object' && value !== null && typeof (value as RedisClient).duplicate === 'function'
}

function isScheme (value: unknown): value is SignatureScheme {
  return typeof value === 'object' && value !== null && typeof (value as SignatureScheme).verify === 'function' &&
    Array.isArray((value as SignatureScheme).headers)
}

/** Checks the queue part of any options, filling in defaults. */
export function resolveQueueSettings (opts: Pick<IngressOptions, 'queueName' | 'prefix' | 'dedupeWindowMs' | 'retrySchedule' | 'retention'>): QueueSettings {
  const retention = { ...DEFAULT_RETENTION, ...opts.retention }
  const deadProblem = deadLetterRetentionProblem(retention)
  if (deadProblem !== undefined) throw new errors.INVALID_OPTIONS(`retention.deadAgeSeconds ${deadProblem.replace("the failed jobs' age", 'retention.failedAgeSeconds')}`)
  return {
    queueName: opts.queueName ?? DEFAULT_QUEUE_SETTINGS.queueName,
    prefix: opts.prefix ?? DEFAULT_QUEUE_SETTINGS.prefix,
    dedupeWindowMs: opts.dedupeWindowMs ?? DEFAULT_QUEUE_SETTINGS.dedupeWindowMs,
    // Checked by the options' schema (RetrySchedule); a copy, so the caller's array can change nothing here.
    retrySchedule: Object.freeze([...opts.retrySchedule ?? DEFAULT_QUEUE_SETTINGS.retrySchedule]),
    retention
  }
}

export function resolveIngressOptions (opts: IngressOptions): ResolvedIngress {
  throwInvalid(checkIngress(opts))
  const redis = opts.redis ?? DEFAULT_REDIS_URL
  if (typeof redis !== 'string' && !isRedisClient(redis)) {
    throw new errors.INVALID_OPTIONS('redis must be a URL string or an ioredis client')
  }
  throwInvalid(typeof redis === 'string' ? redisUrlProblem(redis) : undefined, 'redis ')
  checkClusterPrefix(redis, opts.prefix ?? DEFAULT_QUEUE_SETTINGS.prefix)
  if (opts.scheme !== undefined && !isScheme(opts.scheme)) {
    throw new errors.INVALID_OPTIONS('scheme must have verify() and headers')
  }
  const sources = resolveSources(opts)
  const telemetry = checkTelemetry(opts.telemetry)
  return {
    redis,
    sources,
    source: opts.source ?? sources[0]?.name ?? DEFAULT_SOURCE,
    bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT,
    settings: resolveQueueSettings(opts),
    enqueueTimeoutMs: opts.enqueueTimeoutMs ?? DEFAULT_ENQUEUE_TIMEOUT_MS,
    retryAfterSeconds: opts.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS,
    ...(opts.replication === undefined ? {} : { replication: opts.replication }),
    ...(telemetry === undefined ? {} : { telemetry }),
    ...(opts.journal === undefined ? {} : { journal: opts.journal })
  }
}
