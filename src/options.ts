import { Type } from '@sinclair/typebox'
import type { Redis } from 'ioredis'
import {
  DEFAULT_BODY_LIMIT, DEFAULT_ENQUEUE_TIMEOUT_MS, DEFAULT_PATH, DEFAULT_RETENTION, DEFAULT_RETRY_AFTER_SECONDS,
  DEFAULT_SOURCE
} from './constants.js'
import { errors } from './errors.js'
import { createKeyDeriver, type IdempotencyStrategy, type KeyDeriver } from './idempotency.js'
import { DEFAULT_QUEUE_SETTINGS, type QueueSettings } from './queue-settings.js'
import { redisUrlProblem, type RedisInput } from './redis.js'
import { validateSchedule } from './retry.js'
import { anvilHmacScheme, type SignatureScheme } from './signature.js'
import { compileCheck } from './validate.js'

export interface IngressOptions {
  /** A Redis URL (Anvil connects and closes) or an ioredis client (left open). Default `redis://127.0.0.1:6379`. */
  redis?: RedisInput
  /** The HMAC secret of the default scheme. */
  secret?: string
  /** Several secrets, tried in turn (rotation). */
  secrets?: string[]
  /** A custom signature scheme instead of the default one. */
  scheme?: SignatureScheme
  path?: string
  /** Names the source in keys and job data, so two sources never share a dedupe key. */
  source?: string
  bodyLimit?: number
  queueName?: string
  prefix?: string
  dedupeWindowMs?: number
  retrySchedule?: number[]
  retention?: Partial<QueueSettings['retention']>
  idempotency?: IdempotencyStrategy
  enqueueTimeoutMs?: number
  retryAfterSeconds?: number
}

const WholeMs = Type.Integer({ minimum: 0 })
const Retention = Type.Object({
  completedAgeSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
  completedCount: Type.Optional(Type.Integer({ minimum: 0 })),
  failedAgeSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
  failedCount: Type.Optional(Type.Integer({ minimum: 0 })),
  deadAgeSeconds: Type.Optional(Type.Integer({ minimum: 0 }))
}, { additionalProperties: false })

/** The plain-data part of the options; the rest (clients, functions) is checked by hand. */
const IngressData = Type.Object({
  redis: Type.Optional(Type.Unknown()),
  secret: Type.Optional(Type.String({ minLength: 1 })),
  secrets: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
  scheme: Type.Optional(Type.Unknown()),
  path: Type.Optional(Type.String({ pattern: '^/' })),
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  bodyLimit: Type.Optional(Type.Integer({ minimum: 1 })),
  queueName: Type.Optional(Type.String({ pattern: '^[^:]+$' })),
  prefix: Type.Optional(Type.String({ minLength: 1 })),
  dedupeWindowMs: Type.Optional(Type.Integer({ minimum: 1 })),
  retrySchedule: Type.Optional(Type.Array(WholeMs)),
  retention: Type.Optional(Retention),
  idempotency: Type.Optional(Type.Unknown()),
  enqueueTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
  retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 0 }))
}, { additionalProperties: false })

const checkIngress = compileCheck(IngressData)

export interface ResolvedIngress {
  redis: RedisInput
  scheme: SignatureScheme
  path: string
  source: string
  bodyLimit: number
  settings: QueueSettings
  deriveKey: KeyDeriver
  enqueueTimeoutMs: number
  retryAfterSeconds: number
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

function isRedisClient (value: unknown): value is Redis {
  return typeof value === 'object' && value !== null && typeof (value as Redis).duplicate === 'function'
}

function isScheme (value: unknown): value is SignatureScheme {
  return typeof value === 'object' && value !== null && typeof (value as SignatureScheme).verify === 'function' &&
    Array.isArray((value as SignatureScheme).headers)
}

/** Checks the queue part of any options, filling in defaults. */
export function resolveQueueSettings (opts: Pick<IngressOptions, 'queueName' | 'prefix' | 'dedupeWindowMs' | 'retrySchedule' | 'retention'>): QueueSettings {
  const retention = { ...DEFAULT_RETENTION, ...opts.retention }
  if (retention.deadAgeSeconds !== 0 && retention.deadAgeSeconds <= retention.failedAgeSeconds) {
    throw new errors.INVALID_OPTIONS('retention.deadAgeSeconds must be 0 or more than retention.failedAgeSeconds')
  }
  return {
    queueName: opts.queueName ?? DEFAULT_QUEUE_SETTINGS.queueName,
    prefix: opts.prefix ?? DEFAULT_QUEUE_SETTINGS.prefix,
    dedupeWindowMs: opts.dedupeWindowMs ?? DEFAULT_QUEUE_SETTINGS.dedupeWindowMs,
    retrySchedule: validateSchedule(opts.retrySchedule ?? DEFAULT_QUEUE_SETTINGS.retrySchedule),
    retention
  }
}

export function resolveIngressOptions (opts: IngressOptions): ResolvedIngress {
  const problem = checkIngress(opts)
  if (problem !== undefined) throw new errors.INVALID_OPTIONS(problem)
  const redis = opts.redis ?? DEFAULT_REDIS_URL
  if (typeof redis !== 'string' && !isRedisClient(redis)) {
    throw new errors.INVALID_OPTIONS('redis must be a URL string or an ioredis client')
  }
  const urlProblem = typeof redis === 'string' ? redisUrlProblem(redis) : undefined
  if (urlProblem !== undefined) throw new errors.INVALID_OPTIONS(`redis ${urlProblem}`)
  if (opts.scheme !== undefined && !isScheme(opts.scheme)) {
    throw new errors.INVALID_OPTIONS('scheme must have verify() and headers')
  }
  const secrets = opts.secrets ?? (opts.secret === undefined ? [] : [opts.secret])
  if (opts.scheme === undefined && secrets.length === 0) {
    throw new errors.INVALID_OPTIONS('secret (or secrets, or scheme) is required')
  }
  return {
    redis,
    scheme: opts.scheme ?? anvilHmacScheme(secrets),
    path: opts.path ?? DEFAULT_PATH,
    source: opts.source ?? DEFAULT_SOURCE,
    bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT,
    settings: resolveQueueSettings(opts),
    deriveKey: createKeyDeriver(opts.idempotency),
    enqueueTimeoutMs: opts.enqueueTimeoutMs ?? DEFAULT_ENQUEUE_TIMEOUT_MS,
    retryAfterSeconds: opts.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS
  }
}
