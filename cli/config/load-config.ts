/**
 * The CLI's configuration per command: flags override the environment, every value is checked (the table
 * is in cli/config/settings.ts), and a bad value becomes one INVALID_CONFIG error. Framework-free, so it
 * can be tested without starting anything.
 */
import { DEFAULT_CONCURRENCY, DEFAULT_RETENTION, DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../../src/shared/constants.js'
import {
  DEFAULT_DEV_HOST, DEFAULT_LOG_LEVEL, DEFAULT_METRICS_PATH, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SERVE_HOST, DEV_SECRET, METRICS_OFF,
  SETTINGS, nameOf, read, type Env, type Flags, type LogLevel, type TracingMode, type WorkerRole
} from './settings.js'
import { errors } from '../../src/shared/errors.js'
import type { IdempotencyStrategy } from '../../src/inbound/idempotency.js'
import type { SourceOptions } from '../../src/inbound/ingress-options.js'
import type { GroupCommitOptions, JournalOptions } from '../../src/journal/journal-options.js'
import { JOB_RETENTION, type Retention } from '../../src/queue/queue-settings.js'
import { loadSourcesFile, type SourcesUse } from './sources-file.js'
import { secretProblem } from '../../src/signing/secret-problem.js'
import { deadLetterRetentionProblem } from '../../src/queue/queue-settings.js'

export {
  CONFIG_ENV_VARS, DEFAULT_DEV_HOST, DEFAULT_LOG_LEVEL, DEFAULT_METRICS_PATH, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SERVE_HOST, DEV_SECRET,
  LOG_LEVELS, METRICS_OFF, NO_RETRIES, TRACING_ENV_VARS, TRACING_MODES, type Env, type Flags, type LogLevel, type TracingMode
} from './settings.js'

export interface CommonConfig {
  /** Undefined when neither REDIS_URL nor --redis-url is set: `dev` probes, the others use the default URL. */
  redisUrl?: string
  queueName?: string
  prefix?: string
  logLevel: LogLevel
}

/** For the long-running commands (serve, worker, dev). */
export interface ObservabilityConfig {
  /** Where Prometheus metrics are served; false (`off`) for nowhere. */
  metricsPath: string | false
  /** A separate port for metrics; undefined serves them on the main port. */
  metricsPort?: number
  /** Log payload bodies (`ANVIL_LOG_PAYLOADS=true`); redacted by default. */
  logPayloads: boolean
  /** `otlp`: OpenTelemetry spans over OTLP/HTTP (cli/tracing.ts); `off` (default) loads nothing of it. */
  tracing: TracingMode
}

/** Unset optional fields fall back to the core's defaults (src/shared/constants.ts), so they live in one place. */
export interface IngressConfig {
  host: string
  port: number
  /** WEBHOOK_SECRET: the single `anvil` source. Unset when a sources file is given. */
  secret?: string
  /** From the sources file (`--config` / ANVIL_CONFIG); replaces secret, path and idempotency. */
  sources?: SourceOptions[]
  path?: string
  bodyLimit?: number
  /** A request not complete (headers and body) within this long gets 408 and its connection is closed. */
  requestTimeoutMs: number
  /** ANVIL_TRUST_PROXY: Fastify's trustProxy (request.ip from X-Forwarded-For). @defaultValue false */
  trustProxy?: boolean | number | string
  /** The plugin's `maxInFlightBytes`: past it a webhook is answered 503 before its body is read. */
  maxInFlightBytes?: number
  dedupeWindowMs?: number
  retrySchedule?: number[]
  idempotency?: IdempotencyStrategy
}

export interface WorkerConfig {
  concurrency: number
  shutdownTimeoutMs: number
  /** The event journal: on when ANVIL_DATABASE_URL is set. */
  journal?: { databaseUrl: string, dbSchema?: string, retentionDays?: number, groupCommit?: GroupCommitOptions }
}

/** The worker's `journal` option from its configuration. */
export function journalOptionsOf (journal: NonNullable<WorkerConfig['journal']>): JournalOptions {
  return {
    database: journal.databaseUrl, schema: journal.dbSchema, retentionDays: journal.retentionDays,
    ...(journal.groupCommit === undefined ? {} : { groupCommit: journal.groupCommit })
  }
}

/**
 * `anvil worker`: how soon a job whose worker died or was forced to stop is taken back (its lock expires
 * after lockDurationMs; a check every stalledIntervalMs finds it). Undefined keeps BullMQ's 30 s each.
 */
export interface StallConfig {
  lockDurationMs?: number
  stalledIntervalMs?: number
}

/**
 * How long finished jobs and dead letters stay in Redis: only what was set (the core fills in
 * DEFAULT_RETENTION), undefined when nothing was. `serve` stamps the job fields on every job it enqueues
 * where they differ from the defaults (which the worker applies); the worker prunes dead letters.
 */
export interface RetentionConfig {
  retention?: Partial<Retention>
}

/** `anvil serve`'s admin API (plugins/admin): off unless ANVIL_ADMIN_TOKEN is set. */
export interface AdminConfig {
  /** The token, and a port of its own (ANVIL_ADMIN_PORT) or undefined for the main port. */
  admin?: { token: string, port?: number }
  /** The PostgreSQL the admin API's features (outgoing webhooks, the journal) use; undefined: none of them. */
  databaseUrl?: string
  dbSchema?: string
  /** ANVIL_OUTBOUND_RETRY_SCHEDULE: the attempts of the delivery jobs a re-send makes. */
  outboundRetrySchedule?: number[]
}

/** The outgoing side's schedules; undefined: the core's defaults. */
export interface OutgoingSchedules {
  /** ANVIL_OUTBOX_MAX_ATTEMPTS */
  outboxMaxAttempts?: number
  /** ANVIL_OUTBOX_RETRY_BASE_MS */
  outboxRetryBaseMs?: number
  /** ANVIL_OUTBOUND_RETRY_SCHEDULE */
  outboundRetrySchedule?: number[]
}

export type ServeConfig = CommonConfig & IngressConfig & RetentionConfig & ObservabilityConfig & AdminConfig & {
  /** ANVIL_ALLOW_SHORT_SECRETS: undefined when unset. */
  allowShortSecrets?: boolean
}
/** The worker serves health and metrics on HOST:PORT, so a probe can reach it. */
export type WorkerCommandConfig = CommonConfig & WorkerConfig & StallConfig & RetentionConfig & ObservabilityConfig & OutgoingSchedules & {
  host: string
  port: number
  /** ANVIL_WORKER_ROLE: which side this process runs; `all` runs whichever is configured. */
  role: WorkerRole
  /** The sources file's sources: those with `forward` are forwarded by the worker; their `secrets` are not read (the worker verifies nothing). */
  sources?: SourceOptions[]
  /** ANVIL_OUTBOUND_ALLOW_NETS: networks the endpoints of outgoing webhooks may reach despite the SSRF guard. */
  outboundAllowNets?: string
  /** ANVIL_FORWARD_ALLOW_NETS: networks forwarded requests may reach despite the SSRF guard. */
  forwardAllowNets?: string
  /** ANVIL_DATABASE_URL: with it, the worker writes the journal around each handler run, dispatches the outbox and delivers outgoing webhooks. */
  databaseUrl?: string
  dbSchema?: string
  outboundRetentionDays?: number
}
export type DevConfig = CommonConfig & IngressConfig & WorkerConfig & RetentionConfig & ObservabilityConfig & OutgoingSchedules & {
  secret: string
  /** With ANVIL_DATABASE_URL, dev migrates it and sends outgoing webhooks too. */
  databaseUrl?: string
  dbSchema?: string
  outboundRetentionDays?: number
  outboundAllowNets?: string
  /** True when WEBHOOK_SECRET was unset and DEV_SECRET is in use. */
  devSecret: boolean
}

function toStrategy (value: string): IdempotencyStrategy {
  if (value.startsWith('header:')) return { header: value.slice('header:'.length) }
  if (value.startsWith('body:')) return { bodyField: value.slice('body:'.length) }
  return value as 'signature' | 'payload'
}

/**
 * The secret comes from the environment only: a flag would show it in `ps` and in shell history. Checked
 * here, so a weak one fails before anything starts (src/signing/secret-problem.ts has the rule).
 */
function readSecret (env: Env, allowShort: boolean): string | undefined {
  const secret = env.WEBHOOK_SECRET
  if (secret === undefined || secret === '') return undefined
  const problem = secretProblem(secret, allowShort, `${SETTINGS.allowShortSecrets.env as string}=true`)
  if (problem !== undefined) throw new errors.INVALID_CONFIG(`WEBHOOK_SECRET ${problem}`)
  return secret
}

export function common (env: Env, flags: Flags): CommonConfig {
  return {
    redisUrl: read(SETTINGS.redisUrl, env, flags),
    queueName: read(SETTINGS.queueName, env, flags),
    prefix: read(SETTINGS.prefix, env, flags),
    logLevel: read(SETTINGS.logLevel, env, flags) ?? DEFAULT_LOG_LEVEL
  }
}

function observability (env: Env, flags: Flags): ObservabilityConfig {
  const metricsPath = read(SETTINGS.metricsPath, env, flags) ?? DEFAULT_METRICS_PATH
  return {
    metricsPath: metricsPath === METRICS_OFF ? false : metricsPath,
    metricsPort: read(SETTINGS.metricsPort, env, flags),
    logPayloads: read(SETTINGS.logPayloads, env, flags) === 'true',
    tracing: read(SETTINGS.tracing, env, flags) ?? 'off'
  }
}

/** The sources file, when one is named; it replaces the single-source settings, so they may not be set too. */
function sourcesFile (env: Env, flags: Flags, allowShort: boolean, use: SourcesUse = 'all'): SourceOptions[] | undefined {
  const file = read(SETTINGS.config, env, flags)
  if (file === undefined) return undefined
  for (const setting of [SETTINGS.path, SETTINGS.idempotency]) {
    if (read(setting, env, flags) !== undefined) {
      throw new errors.INVALID_CONFIG(`${setting.env ?? setting.flag} does not go with a sources file (${SETTINGS.config.env}): set it per source there`)
    }
  }
  return loadSourcesFile(file, env, allowShort, use)
}

function ingress (env: Env, flags: Flags, defaultHost: string, secret: string | undefined, allowShort: boolean): IngressConfig {
  const idempotency = read(SETTINGS.idempotency, env, flags)
  const sources = sourcesFile(env, flags, allowShort)
  return {
    ...(sources === undefined ? {} : { sources }),
    host: read(SETTINGS.host, env, flags) ?? defaultHost,
    port: read(SETTINGS.port, env, flags) ?? DEFAULT_PORT,
    secret,
    path: read(SETTINGS.path, env, flags),
    bodyLimit: read(SETTINGS.bodyLimit, env, flags),
    requestTimeoutMs: read(SETTINGS.requestTimeoutMs, env, flags) ?? DEFAULT_REQUEST_TIMEOUT_MS,
    ...optional('trustProxy', read(SETTINGS.trustProxy, env, flags)),
    maxInFlightBytes: read(SETTINGS.maxInFlightBytes, env, flags),
    dedupeWindowMs: read(SETTINGS.dedupeWindowMs, env, flags),
    retrySchedule: read(SETTINGS.retrySchedule, env, flags),
    idempotency: idempotency === undefined ? undefined : toStrategy(idempotency)
  }
}

function worker (env: Env, flags: Flags): WorkerConfig {
  const databaseUrl = read(SETTINGS.databaseUrl, env, flags)
  const groupCommit = read(SETTINGS.journalGroupCommit, env, flags)
  const journal = {
    dbSchema: read(SETTINGS.dbSchema, env, flags), retentionDays: read(SETTINGS.journalRetentionDays, env, flags),
    ...(groupCommit === undefined ? {} : { groupCommit })
  }
  return {
    concurrency: read(SETTINGS.concurrency, env, flags) ?? DEFAULT_CONCURRENCY,
    shutdownTimeoutMs: read(SETTINGS.shutdownTimeoutMs, env, flags) ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
    // Without a database there is no journal, and its retention has nothing to delete.
    journal: databaseUrl === undefined ? undefined : { databaseUrl, ...journal }
  }
}

/** The worker reads the failed jobs' age only to check that dead letters outlive them. */
const DEAD_LETTER_RETENTION = ['failedAgeSeconds', 'deadAgeSeconds'] as const
const ALL_RETENTION = [...JOB_RETENTION, 'deadAgeSeconds'] as const

/**
 * The retention settings in `fields`, and the core's rule across them (src/inbound/ingress-options.ts): a dead letter must
 * outlive the failed job it copies, or the sweep, which re-reads recent failures, could write it again.
 */
function retention (env: Env, flags: Flags, fields: ReadonlyArray<keyof Retention>): RetentionConfig {
  const set: Partial<Retention> = {}
  for (const field of fields) {
    const value = read(SETTINGS[field], env, flags)
    if (value !== undefined) set[field] = value
  }
  if (Object.keys(set).length === 0) return { retention: undefined }
  const failedAgeSeconds = set.failedAgeSeconds ?? DEFAULT_RETENTION.failedAgeSeconds
  const deadAgeSeconds = set.deadAgeSeconds ?? DEFAULT_RETENTION.deadAgeSeconds
  const problem = deadLetterRetentionProblem({ failedAgeSeconds, deadAgeSeconds })
  if (problem !== undefined) {
    const got = set.deadAgeSeconds === undefined ? `its default, ${deadAgeSeconds}` : JSON.stringify(String(deadAgeSeconds))
    throw new errors.INVALID_CONFIG(`${nameOf(SETTINGS.deadAgeSeconds, flags)} ${problem.replace("the failed jobs' age", nameOf(SETTINGS.failedAgeSeconds, flags))} (got ${got})`)
  }
  return { retention: set }
}

function admin (env: Env, flags: Flags, port: number): AdminConfig {
  const token = read(SETTINGS.adminToken, env, flags)
  const adminPort = read(SETTINGS.adminPort, env, flags)
  if (adminPort !== undefined) {
    const named = nameOf(SETTINGS.adminPort, flags)
    if (token === undefined) throw new errors.INVALID_CONFIG(`${named} is set but ${SETTINGS.adminToken.env as string} is not: the admin API is off without a token`)
    if (adminPort === port && port !== 0) throw new errors.INVALID_CONFIG(`${named} must differ from the main port (got ${adminPort})`)
  }
  return {
    admin: token === undefined ? undefined : { token, port: adminPort },
    databaseUrl: read(SETTINGS.databaseUrl, env, flags),
    dbSchema: read(SETTINGS.dbSchema, env, flags),
    ...optional('outboundRetrySchedule', read(SETTINGS.outboundRetrySchedule, env, flags))
  }
}

export function loadServeConfig (env: Env, flags: Flags = {}): ServeConfig {
  const allowShort = read(SETTINGS.allowShortSecrets, env, flags)
  const secret = readSecret(env, allowShort === 'true')
  if (secret === undefined && read(SETTINGS.config, env, flags) === undefined) {
    throw new errors.INVALID_CONFIG('WEBHOOK_SECRET is required: set it to the secret your webhook sender signs with')
  }
  const ingressConfig = ingress(env, flags, DEFAULT_SERVE_HOST, secret, allowShort === 'true')
  return {
    ...common(env, flags),
    ...ingressConfig,
    ...retention(env, flags, ALL_RETENTION),
    ...observability(env, flags),
    ...admin(env, flags, ingressConfig.port),
    allowShortSecrets: allowShort === undefined ? undefined : allowShort === 'true'
  }
}

export function loadWorkerConfig (env: Env, flags: Flags = {}): WorkerCommandConfig {
  const role = read(SETTINGS.workerRole, env, flags) ?? 'all'
  if (role === 'outbound' && read(SETTINGS.databaseUrl, env, flags) === undefined) {
    throw new errors.INVALID_CONFIG(`${nameOf(SETTINGS.workerRole, flags)} outbound needs ANVIL_DATABASE_URL (or --database-url): the outbox is in PostgreSQL`)
  }
  return {
    ...common(env, flags),
    ...worker(env, flags),
    lockDurationMs: read(SETTINGS.lockDurationMs, env, flags),
    stalledIntervalMs: read(SETTINGS.stalledIntervalMs, env, flags),
    ...retention(env, flags, DEAD_LETTER_RETENTION),
    ...observability(env, flags),
    host: read(SETTINGS.host, env, flags) ?? DEFAULT_SERVE_HOST,
    port: read(SETTINGS.port, env, flags) ?? DEFAULT_PORT,
    role,
    ...optional('sources', sourcesFile(env, flags, read(SETTINGS.allowShortSecrets, env, flags) === 'true', 'forward')),
    ...optional('outboundAllowNets', read(SETTINGS.outboundAllowNets, env, flags)),
    ...optional('forwardAllowNets', read(SETTINGS.forwardAllowNets, env, flags)),
    ...outgoing(env, flags)
  }
}

/** The database of the outgoing side (`worker`, `dev`); its schema and the outbox's retention only with it. */
function outgoing (env: Env, flags: Flags): OutgoingSchedules & { databaseUrl?: string, dbSchema?: string, outboundRetentionDays?: number } {
  const databaseUrl = read(SETTINGS.databaseUrl, env, flags)
  // Read (so checked) either way, like the journal's: a bad value is refused before the database is added.
  const retentionDays = read(SETTINGS.outboundRetentionDays, env, flags)
  const schedules = {
    ...optional('outboxMaxAttempts', read(SETTINGS.outboxMaxAttempts, env, flags)),
    ...optional('outboxRetryBaseMs', read(SETTINGS.outboxRetryBaseMs, env, flags)),
    ...optional('outboundRetrySchedule', read(SETTINGS.outboundRetrySchedule, env, flags))
  }
  if (databaseUrl === undefined) return {}
  return { databaseUrl, ...optional('dbSchema', read(SETTINGS.dbSchema, env, flags)), ...optional('outboundRetentionDays', retentionDays), ...schedules }
}

function optional<K extends string, V> (key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : { [key]: value } as Record<K, V>
}

/** `anvil dev` accepts short secrets (its own DEV_SECRET among them): it is for a laptop, not for traffic. */
export function loadDevConfig (env: Env, flags: Flags = {}): DevConfig {
  const secret = readSecret(env, true)
  return {
    ...common(env, flags),
    ...ingress(env, flags, DEFAULT_DEV_HOST, secret ?? DEV_SECRET, true),
    ...worker(env, flags),
    ...retention(env, flags, ALL_RETENTION),
    ...observability(env, flags),
    secret: secret ?? DEV_SECRET,
    devSecret: secret === undefined,
    ...outgoing(env, flags),
    ...optional('outboundAllowNets', read(SETTINGS.outboundAllowNets, env, flags))
  }
}
