import { Type } from '@sinclair/typebox'
import {
  DEFAULT_BODY_LIMIT, DEFAULT_ENQUEUE_TIMEOUT_MS, DEFAULT_PATH, DEFAULT_RETENTION, DEFAULT_RETRY_AFTER_SECONDS,
  DEFAULT_SOURCE
} from '../shared/constants.js'
import { errors } from '../shared/errors.js'
import { createKeyDeriver, type IdempotencyStrategy, type KeyDeriver } from './idempotency.js'
import { DEFAULT_QUEUE_SETTINGS, type QueueSettings } from '../queue/queue-settings.js'
import { RetentionSchema } from '../shared/schemas.js'
import { checkClusterPrefix, redisUrlProblem, type RedisClient, type RedisInput } from '../redis/connect.js'
import { validateSchedule } from '../queue/retry.js'
import {
  createPresetScheme, DEFAULT_PROVIDER, DEFAULT_TOLERANCE_SECONDS, isProviderName, PROVIDER_NAMES,
  type ProviderName
} from '../providers/presets.js'
import { type SignatureScheme } from '../signing/signature-scheme.js'
import { anvilHmacScheme } from '../providers/anvil.js'
import { checkTelemetry, type Telemetry } from '../queue/telemetry.js'
import { compileCheck } from '../shared/validate.js'
import { Prefix, QueueName, RetrySchedule } from '../shared/schemas.js'
import { deadLetterRetentionProblem } from '../queue/queue-settings.js'

/** One webhook endpoint: a path, the provider that signs what arrives there, and its secrets. */
export interface SourceOptions {
  path: string
  /** The preset; default `anvil` (`x-signature: sha256=<hex>`). */
  provider?: ProviderName
  /** Secrets (or, for `discord` and `sendgrid`, public keys); all are tried, so rotation is adding one. */
  secrets: string[]
  /** Seconds either way a signed timestamp may be from now; default 300, 0 turns the check off. */
  tolerance?: number
  /** The URL as configured at the provider (scheme, host, path), for presets that sign it (twilio, square). */
  publicUrl?: string
  /** Default: the provider's event id (`'provider'`); `'signature'` for `anvil`. */
  idempotency?: IdempotencyStrategy
  /** Names the source in dedupe keys and on jobs; default the provider's name. Must be unique. */
  name?: string
}

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
  /** Opt-in: answer 202 only once this many replicas have the write (`WAIT`); one Redis server only. */
  replication?: { replicas: number, timeoutMs: number }
  /** Several endpoints, each with its own provider preset; instead of secret/secrets/scheme/path/idempotency. */
  sources?: SourceOptions[]
  /** BullMQ telemetry (e.g. `new BullMQOtel()`): an `addBulk` span, and each job carries its request's trace context. */
  telemetry?: Telemetry
}

const Source = Type.Object({
  path: Type.String({ pattern: '^/' }),
  provider: Type.Optional(Type.Union(PROVIDER_NAMES.map((name) => Type.Literal(name)))),
  secrets: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  tolerance: Type.Optional(Type.Integer({ minimum: 0 })),
  publicUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
  idempotency: Type.Optional(Type.Unknown()),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 }))
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
  queueName: Type.Optional(QueueName()),
  prefix: Type.Optional(Prefix()),
  dedupeWindowMs: Type.Optional(Type.Integer({ minimum: 1 })),
  retrySchedule: Type.Optional(RetrySchedule()),
  retention: Type.Optional(RetentionSchema),
  idempotency: Type.Optional(Type.Unknown()),
  enqueueTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
  retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 0 })),
  sources: Type.Optional(Type.Array(Source, { minItems: 1 })),
  telemetry: Type.Optional(Type.Unknown()),
  replication: Type.Optional(Type.Object({
    replicas: Type.Integer({ minimum: 1 }),
    timeoutMs: Type.Integer({ minimum: 1 })
  }, { additionalProperties: false }))
}, { additionalProperties: false })

const checkIngress = compileCheck(IngressData)

/** A source ready to serve: its scheme built, its key deriver chosen. */
export interface ResolvedSource {
  name: string
  provider: string
  path: string
  scheme: SignatureScheme
  deriveKey: KeyDeriver
  publicUrl?: string
}

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
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

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
  checkClusterPrefix(redis, opts.prefix ?? DEFAULT_QUEUE_SETTINGS.prefix)
  if (opts.scheme !== undefined && !isScheme(opts.scheme)) {
    throw new errors.INVALID_OPTIONS('scheme must have verify() and headers')
  }
  const sources = opts.sources === undefined ? [singleSource(opts)] : resolveSources(opts)
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
    ...(telemetry === undefined ? {} : { telemetry })
  }
}

/** The single-source options of 0.1 (`secret`/`secrets`/`scheme`/`path`/`idempotency`): one `anvil` source. */
function singleSource (opts: IngressOptions): ResolvedSource {
  const secrets = opts.secrets ?? (opts.secret === undefined ? [] : [opts.secret])
  if (opts.scheme === undefined && secrets.length === 0) {
    throw new errors.INVALID_OPTIONS('secret (or secrets, or scheme) is required, or sources')
  }
  const scheme = opts.scheme ?? anvilHmacScheme(secrets)
  return {
    name: opts.source ?? DEFAULT_SOURCE,
    provider: scheme.name,
    path: opts.path ?? DEFAULT_PATH,
    scheme,
    deriveKey: createKeyDeriver(opts.idempotency)
  }
}

function resolveSources (opts: IngressOptions): ResolvedSource[] {
  const mixed = (['secret', 'secrets', 'scheme', 'path', 'idempotency'] as const).filter((key) => opts[key] !== undefined)
  if (mixed.length > 0) throw new errors.INVALID_OPTIONS(`sources replaces ${mixed.join(', ')}: give one or the other`)
  const resolved = (opts.sources ?? []).map(resolveSource)
  for (const key of ['name', 'path'] as const) {
    const seen = new Set<string>()
    for (const source of resolved) {
      if (seen.has(source[key])) {
        throw new errors.INVALID_OPTIONS(`two sources share the ${key} "${source[key]}"${key === 'name' ? ': give each a name' : ''}`)
      }
      seen.add(source[key])
    }
  }
  return resolved
}

function resolveSource (source: SourceOptions, index: number): ResolvedSource {
  const provider = source.provider ?? DEFAULT_PROVIDER
  /* c8 ignore next -- the schema already allows only preset names */
  if (!isProviderName(provider)) throw new errors.INVALID_OPTIONS(`sources.${index}.provider: unknown preset ${provider}`)
  const scheme = createPresetScheme(provider, {
    secrets: source.secrets,
    toleranceSeconds: source.tolerance ?? DEFAULT_TOLERANCE_SECONDS,
    publicUrl: source.publicUrl
  })
  // A header is the same for every event of a batch: all but the first would be taken for duplicates.
  if (scheme.batches === true && typeof source.idempotency === 'object' && source.idempotency !== null && 'header' in source.idempotency) {
    throw new errors.INVALID_OPTIONS(`sources.${index}.idempotency: a ${provider} body is a batch of events, which one header cannot key; use 'provider', 'payload', { bodyField } or a function`)
  }
  return {
    name: source.name ?? provider,
    provider,
    path: source.path,
    scheme,
    deriveKey: createKeyDeriver(source.idempotency ?? (provider === DEFAULT_PROVIDER ? 'signature' : 'provider')),
    publicUrl: source.publicUrl
  }
}
