/**
 * The CLI's configuration per command: flags override the environment, every value is checked (the table
 * is in cli/config/settings.ts), and a bad value becomes one INVALID_CONFIG error. Framework-free, so it
 * can be tested without starting anything. Each group of settings is read whole (readGroup), or nested under
 * an option's names (readFields, cli/config/options.ts `NESTED`): no setting is read, typed or defaulted here.
 */
import { DEFAULT_RETENTION } from '../../src/shared/constants.js'
import {
  DEV_SECRET, SETTINGS, except, nameOf, read, readFields, readGroup, type DefaultsShown, type Env, type Flags
} from './settings.js'
import { DEV_DEFAULTS, NESTED, SETTING_GROUPS } from './options.js'
import { errors } from '../../src/shared/errors.js'
import { loadSourcesFile, type SourcesUse } from './sources-file.js'
import { secretProblem } from '../../src/signing/secret-problem.js'
import { deadLetterRetentionProblem } from '../../src/queue/queue-settings.js'

export {
  CONFIG_ENV_VARS, DEFAULT_DEV_HOST, DEFAULT_LOG_LEVEL, DEFAULT_METRICS_PATH, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SERVE_HOST, DEV_SECRET,
  LOG_LEVELS, METRICS_OFF, NO_RETRIES, TRACING_ENV_VARS, TRACING_MODES, type Env, type Flags, type LogLevel, type TracingMode
} from './settings.js'

export * from './command-config.js'
import type {
  CommonConfig, ObservabilityConfig, IngressConfig, WorkerConfig, RetentionConfig, AdminConfig, ServeConfig, WorkerCommandConfig, DevConfig, SourcesConfig
} from './command-config.js'

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

/** The settings of the single `anvil` source, which a sources file sets per source. */
const SINGLE_SOURCE = ['path', 'idempotency'] as const

/** The sources file, when one is named; it replaces the single-source settings, so they may not be set too. */
function sourcesFile (env: Env, flags: Flags, allowShort: boolean, use: SourcesUse = 'all'): SourcesConfig {
  const file = read(SETTINGS.config, env, flags)
  if (file === undefined) return {}
  const single = readGroup(SINGLE_SOURCE, env, flags)
  for (const key of SINGLE_SOURCE) {
    if (single[key] !== undefined) {
      throw new errors.INVALID_CONFIG(`${SETTINGS[key].env ?? SETTINGS[key].flag} does not go with a sources file (${SETTINGS.config.env}): set it per source there`)
    }
  }
  return { sources: loadSourcesFile(file, env, allowShort, use) }
}

/** `defaults`: the command's own, where they differ from the table's (`anvil dev` listens on loopback). */
function ingress (env: Env, flags: Flags, secret: string | undefined, allowShort: boolean, defaults?: DefaultsShown): IngressConfig {
  const sources = sourcesFile(env, flags, allowShort)
  return { ...sources, ...readGroup(except(SETTING_GROUPS.ingress, ['config']), env, flags, defaults), secret }
}

function worker (env: Env, flags: Flags): WorkerConfig {
  const journal = readFields(NESTED.journal, env, flags)
  // Read (so checked) either way: a bad value is refused before the database is added.
  const outbound = readGroup(SETTING_GROUPS.workerOutbound, env, flags)
  return {
    ...readGroup(SETTING_GROUPS.worker, env, flags),
    ...readGroup(SETTING_GROUPS.workerLinks, env, flags),
    // Without a database there is no journal nor outbox, and their retention has nothing to delete.
    ...(journal?.databaseUrl === undefined ? {} : { databaseUrl: journal.databaseUrl, dbSchema: journal.dbSchema, ...outbound }),
    journal: journal?.databaseUrl === undefined ? undefined : { ...journal, databaseUrl: journal.databaseUrl }
  }
}

/**
 * The retention settings in `keys`, and the core's rule across them (src/inbound/ingress-options.ts): a dead letter must
 * outlive the failed job it copies, or the sweep, which re-reads recent failures, could write it again.
 */
function retention (env: Env, flags: Flags, keys: ReadonlyArray<keyof NonNullable<RetentionConfig['retention']>>): RetentionConfig {
  const set = Object.fromEntries(Object.entries(readGroup(keys, env, flags)).filter(([, value]) => value !== undefined)) as RetentionConfig['retention'] & object
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

/** The worker reads the failed jobs' age only to check that dead letters outlive them. */
const ALL_RETENTION = [...SETTING_GROUPS.jobRetention, ...SETTING_GROUPS.deadLetterRetention]

function admin (env: Env, flags: Flags, port: number): AdminConfig {
  const api = readFields(NESTED.admin, env, flags)
  if (api?.port !== undefined) {
    const named = nameOf(SETTINGS.adminPort, flags)
    if (api.token === undefined) throw new errors.INVALID_CONFIG(`${named} is set but ${SETTINGS.adminToken.env as string} is not: the admin API is off without a token`)
    if (api.port === port && port !== 0) throw new errors.INVALID_CONFIG(`${named} must differ from the main port (got ${api.port})`)
  }
  return {
    ...readGroup(except(SETTING_GROUPS.admin, [...Object.values(NESTED.admin), ...Object.values(NESTED.portal)]), env, flags),
    admin: api?.token === undefined ? undefined : { ...api, token: api.token },
    portal: readFields(NESTED.portal, env, flags)
  }
}

export function loadServeConfig (env: Env, flags: Flags = {}): ServeConfig {
  const secrets = readGroup(SETTING_GROUPS.secrets, env, flags)
  const secret = readSecret(env, secrets.allowShortSecrets === true)
  if (secret === undefined && read(SETTINGS.config, env, flags) === undefined) {
    throw new errors.INVALID_CONFIG('WEBHOOK_SECRET is required: set it to the secret your webhook sender signs with')
  }
  const ingressConfig = ingress(env, flags, secret, secrets.allowShortSecrets === true)
  return {
    ...common(env, flags),
    ...ingressConfig,
    ...retention(env, flags, ALL_RETENTION),
    ...observability(env, flags),
    ...admin(env, flags, ingressConfig.port),
    ...secrets
  }
}

export function loadWorkerConfig (env: Env, flags: Flags = {}): WorkerCommandConfig {
  const { role } = readGroup(SETTING_GROUPS.workerRole, env, flags)
  const config = worker(env, flags)
  if (role === 'outbound' && config.databaseUrl === undefined) {
    throw new errors.INVALID_CONFIG(`${nameOf(SETTINGS.role, flags)} outbound needs ANVIL_DATABASE_URL (or --database-url): the outbox is in PostgreSQL`)
  }
  const forward = readGroup(except(SETTING_GROUPS.forward, ['config']), env, flags)
  return {
    ...common(env, flags),
    ...config,
    ...readGroup(SETTING_GROUPS.stall, env, flags),
    ...retention(env, flags, SETTING_GROUPS.deadLetterRetention),
    ...observability(env, flags),
    ...readGroup(SETTING_GROUPS.workerHttp, env, flags),
    role,
    ...forward,
    ...sourcesFile(env, flags, forward.allowShortSecrets === true, 'forward')
  }
}

/** `anvil dev` accepts short secrets (its own DEV_SECRET among them): it is for a laptop, not for traffic. */
export function loadDevConfig (env: Env, flags: Flags = {}): DevConfig {
  const secret = readSecret(env, true)
  return {
    ...common(env, flags),
    ...ingress(env, flags, secret ?? DEV_SECRET, true, DEV_DEFAULTS),
    ...worker(env, flags),
    ...retention(env, flags, ALL_RETENTION),
    ...observability(env, flags),
    ...readGroup(SETTING_GROUPS.devOutbound, env, flags),
    secret: secret ?? DEV_SECRET,
    devSecret: secret === undefined
  }
}
