/**
 * The CLI's configuration per command: flags override the environment, every value is checked (the table
 * is in cli/config/settings.ts), and a bad value becomes one INVALID_CONFIG error. Framework-free, so it
 * can be tested without starting anything.
 */
import { DEFAULT_ADMIN_PREFIX, DEFAULT_RETENTION } from '../../src/shared/constants.js'
import { portalPageUrl } from '../../src/portal/portal-options.js'
import {
  DEFAULT_DEV_HOST, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SERVE_HOST, DEV_SECRET, SETTINGS, nameOf, read, readGroup, type Env, type Flags
} from './settings.js'
import { SETTING_GROUPS } from './options.js'
import { errors } from '../../src/shared/errors.js'
import type { IdempotencyStrategy } from '../../src/inbound/idempotency.js'
import type { SourceOptions } from '../../src/inbound/ingress-options.js'
import { JOB_RETENTION, type Retention } from '../../src/queue/queue-settings.js'
import { loadSourcesFile, type SourcesUse } from './sources-file.js'
import { secretProblem } from '../../src/signing/secret-problem.js'
import { deadLetterRetentionProblem } from '../../src/queue/queue-settings.js'

export {
  CONFIG_ENV_VARS, DEFAULT_DEV_HOST, DEFAULT_LOG_LEVEL, DEFAULT_METRICS_PATH, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SERVE_HOST, DEV_SECRET,
  LOG_LEVELS, METRICS_OFF, NO_RETRIES, TRACING_ENV_VARS, TRACING_MODES, type Env, type Flags, type LogLevel, type TracingMode
} from './settings.js'

export * from './command-config.js'
import type { CommonConfig, ObservabilityConfig, IngressConfig, WorkerConfig, RetentionConfig, AdminConfig, OutboundSchedules, ServeConfig, WorkerCommandConfig, DevConfig } from './command-config.js'

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

export const common = (env: Env, flags: Flags): CommonConfig => readGroup(SETTING_GROUPS.shared, env, flags)

const observability = (env: Env, flags: Flags): ObservabilityConfig => readGroup(SETTING_GROUPS.observability, env, flags)

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
    ...(groupCommit === undefined ? {} : { groupCommit }),
    ...optional('queue', read(SETTINGS.journalQueue, env, flags))
  }
  return {
    ...readGroup(SETTING_GROUPS.worker, env, flags),
    // Without a database there is no journal, and its retention has nothing to delete.
    journal: databaseUrl === undefined ? undefined : { databaseUrl, ...journal },
    ...optional('consoleUrl', read(SETTINGS.consoleUrl, env, flags)),
    // A tenant's own operational events link into the portal page that anvil serve offers under this origin.
    ...optional('portalUrl', portalPage(read(SETTINGS.portalPublicUrl, env, flags)))
  }
}

/** The portal page under ANVIL_PORTAL_PUBLIC_URL, where anvil serve's admin API (at its fixed prefix) serves it. */
const portalPage = (publicUrl: string | undefined): string | undefined => publicUrl === undefined ? undefined : portalPageUrl(publicUrl, DEFAULT_ADMIN_PREFIX)

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
  const portal = {
    ...optional('publicUrl', read(SETTINGS.portalPublicUrl, env, flags)),
    ...optional('frameAncestors', read(SETTINGS.portalFrameAncestors, env, flags)),
    ...optional('theme', read(SETTINGS.portalTheme, env, flags)),
    ...optional('limits', read(SETTINGS.portalLimits, env, flags))
  }
  return {
    admin: token === undefined ? undefined : { token, port: adminPort },
    databaseUrl: read(SETTINGS.databaseUrl, env, flags),
    dbSchema: read(SETTINGS.dbSchema, env, flags),
    ...optional('journalQueue', read(SETTINGS.journalQueue, env, flags)),
    ...optional('outboundRetrySchedule', read(SETTINGS.outboundRetrySchedule, env, flags)),
    ...optional('portal', Object.keys(portal).length === 0 ? undefined : portal)
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
    ...readGroup(SETTING_GROUPS.stall, env, flags),
    ...retention(env, flags, DEAD_LETTER_RETENTION),
    ...observability(env, flags),
    host: read(SETTINGS.host, env, flags) ?? DEFAULT_SERVE_HOST,
    port: read(SETTINGS.port, env, flags) ?? DEFAULT_PORT,
    role,
    ...optional('sources', sourcesFile(env, flags, read(SETTINGS.allowShortSecrets, env, flags) === 'true', 'forward')),
    ...optional('outboundAllowNets', read(SETTINGS.outboundAllowNets, env, flags)),
    ...optional('forwardAllowNets', read(SETTINGS.forwardAllowNets, env, flags)),
    ...outboundConfig(env, flags)
  }
}

/** The database of the outgoing side (`worker`, `dev`); its schema and the outbox's retention only with it. */
function outboundConfig (env: Env, flags: Flags): OutboundSchedules & { databaseUrl?: string, dbSchema?: string, outboundRetentionDays?: number } {
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

export function optional<K extends string, V> (key: K, value: V | undefined): Partial<Record<K, V>> {
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
    ...outboundConfig(env, flags),
    ...optional('outboundAllowNets', read(SETTINGS.outboundAllowNets, env, flags))
  }
}
