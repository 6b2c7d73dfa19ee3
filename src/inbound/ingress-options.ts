/** The ingress's options: the schema, whose `Static<>` is their type, and how they resolve into what the ingress runs on. */
import { Type, type Static } from '@sinclair/typebox'
import {
  DEFAULT_BODY_LIMIT, DEFAULT_ENQUEUE_TIMEOUT_MS, DEFAULT_PATH, DEFAULT_REDIS_URL, DEFAULT_RETENTION,
  DEFAULT_RETRY_AFTER_SECONDS, DEFAULT_SOURCE
} from '../shared/constants.js'
import { errors } from '../shared/errors.js'
import { createKeyDeriver, type IdempotencyStrategy, type KeyDeriver } from './idempotency.js'
import { DEFAULT_QUEUE_SETTINGS, type QueueSettings } from '../queue/queue-settings.js'
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
import { Opaque, Prefix, QueueName, RetentionSchema, RetrySchedule } from '../shared/schemas.js'
import { deadLetterRetentionProblem } from '../queue/queue-settings.js'

/** One webhook endpoint: a path, the provider that signs what arrives there, and its secrets. */
export const SourceSchema = Type.Object({
  /** The route, from `/`. */
  path: Type.String({ pattern: '^/' }),
  /** The preset. @defaultValue `'anvil'` (`x-signature: sha256=<hex>`) */
  provider: Type.Optional(Type.Union(PROVIDER_NAMES.map((name) => Type.Literal(name)))),
  /** Secrets (or, for `discord` and `sendgrid`, public keys); all are tried, so rotation is adding one. */
  secrets: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  /** Seconds either way a signed timestamp may be from now; 0 turns the check off. @defaultValue 300 */
  tolerance: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The URL as configured at the provider (scheme, host, path), for presets that sign it (twilio, square). */
  publicUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** How the dedupe key is made. @defaultValue `'provider'` (the provider's event id); `'signature'` for `anvil` */
  idempotency: Type.Optional(Opaque<IdempotencyStrategy>()),
  /** Names the source in dedupe keys and on jobs; must be unique. @defaultValue the provider's name */
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 }))
}, { additionalProperties: false })

export type SourceOptions = Static<typeof SourceSchema>

/** The ingress's options; the `anvil` plugin's add `connectTimeoutMs` (plugins/ingress.ts). */
export const ingressProperties = {
  /** A Redis URL (Anvil connects and closes) or an ioredis client (left open). @defaultValue `'redis://127.0.0.1:6379'` */
  redis: Type.Optional(Opaque<RedisInput>()),
  /** The HMAC secret of the default scheme. */
  secret: Type.Optional(Type.String({ minLength: 1 })),
  /** Several secrets, tried in turn (rotation). */
  secrets: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
  /** A custom signature scheme instead of the default one. */
  scheme: Type.Optional(Opaque<SignatureScheme>()),
  /** The webhook route. @defaultValue `'/webhooks'` */
  path: Type.Optional(Type.String({ pattern: '^/' })),
  /** Names the source in keys and job data, so two sources never share a dedupe key. @defaultValue `'default'` */
  source: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  /** The largest body accepted, in bytes; larger gets 413. @defaultValue 1048576 (1 MiB) */
  bodyLimit: Type.Optional(Type.Integer({ minimum: 1 })),
  /** @defaultValue `'webhooks'` */
  queueName: Type.Optional(QueueName()),
  /** BullMQ's key prefix; a hash tag keeps a queue in one Redis Cluster slot. @defaultValue `'{anvil}'` */
  prefix: Type.Optional(Prefix()),
  /** How long a delivery is remembered. @defaultValue 259200000 (72 h) */
  dedupeWindowMs: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Delays before each retry, in ms; travels with the job. @defaultValue `[1000, 5000, 30000, 300000]` */
  retrySchedule: Type.Optional(RetrySchedule()),
  /** How long finished jobs and dead letters stay; what is not given keeps its default. */
  retention: Type.Optional(RetentionSchema),
  /** How the dedupe key is made. @defaultValue `'signature'` */
  idempotency: Type.Optional(Opaque<IdempotencyStrategy>()),
  /** How long Redis has to take an add before the answer is 503. @defaultValue 1500 */
  enqueueTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
  /** The `retry-after` of a 503, in seconds. @defaultValue 5 */
  retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Opt-in: answer 202 only once this many replicas have the write (`WAIT`); one Redis server only. @defaultValue off */
  replication: Type.Optional(Type.Object({
    replicas: Type.Integer({ minimum: 1 }),
    timeoutMs: Type.Integer({ minimum: 1 })
  }, { additionalProperties: false })),
  /** Several endpoints, each with its own provider preset; instead of secret/secrets/scheme/path/idempotency. */
  sources: Type.Optional(Type.Array(SourceSchema, { minItems: 1 })),
  /** BullMQ telemetry (e.g. `new BullMQOtel()`): an `addBulk` span, and each job carries its request's trace context. @defaultValue off */
  telemetry: Type.Optional(Opaque<Telemetry>())
}

export const IngressOptionsSchema = Type.Object(ingressProperties, { additionalProperties: false })

export type IngressOptions = Static<typeof IngressOptionsSchema>

const checkIngress = compileCheck(IngressOptionsSchema)

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
