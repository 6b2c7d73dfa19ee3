/**
 * Commander's flags, built from the settings table (cli/config/settings.ts): each flag with its description,
 * its default and its variable as `--help` shows them. Only what was typed reaches the loaders
 * (`givenFlags`): they read the environment themselves, so a flag wins over its variable, an empty variable
 * counts as unset, and an error names the flag only when the flag was given. There is no flag for the secret:
 * it would show in `ps` and in shell history.
 */
import { Option, type Command } from 'commander'
import { DEFAULT_DEV_HOST, SETTINGS, type DefaultsShown, type Flags, type SettingKey } from './settings.js'

export type { DefaultsShown }

/** The groups of settings, per command; cli/anvil.ts puts them together and the loaders read the same ones. */
export const SETTING_GROUPS = {
  shared: ['redisUrl', 'queueName', 'prefix', 'logLevel'],
  ingress: ['host', 'port', 'trustProxy', 'path', 'bodyLimit', 'requestTimeoutMs', 'maxInFlightBytes', 'dedupeWindowMs', 'retrySchedule', 'idempotency', 'config'],
  /** `serve` only: `anvil dev` always accepts short secrets. */
  secrets: ['allowShortSecrets'],
  worker: ['concurrency', 'shutdownTimeoutMs'],
  /** `worker` only: BullMQ's stalled-job detection, for jobs a dead or forced-off worker left active. */
  stall: ['lockDurationMs', 'stalledIntervalMs'],
  /** `serve` and `dev`: how long finished jobs (stamped on each job, when not the default) stay in Redis. */
  jobRetention: ['completedAgeSeconds', 'completedCount', 'failedCount'],
  /** `worker` too: dead letters are its to prune; the failed jobs' age is read to check that they outlive them. */
  deadLetterRetention: ['failedAgeSeconds', 'deadAgeSeconds'],
  /** The long-running commands: where health and metrics are served, and what is logged. */
  observability: ['metricsPath', 'metricsPort', 'tracing', 'logPayloads'],
  /** `anvil worker` listens too: health probes and metrics. */
  workerHttp: ['host', 'port'],
  /** `anvil worker` only: one side (inbound jobs, or the outbox) per process, when they should scale apart. */
  workerRole: ['role'],
  /** `anvil worker`: the sources file whose sources forward, and where outgoing webhooks may go. */
  forward: ['config', 'allowShortSecrets', 'outboundAllowNets', 'forwardAllowNets'],
  /** `serve`: the admin API, on when ANVIL_ADMIN_TOKEN is set (it has no flag), and the database its features use. */
  admin: ['adminToken', 'adminPort', 'databaseUrl', 'dbSchema', 'journalQueue', 'outboundRetrySchedule', 'encryptionKey', 'portalPublicUrl', 'portalFrameAncestors', 'portalTheme', 'portalLimits'],
  /** `events` and `replay`: the admin API (ANVIL_ADMIN_URL with ANVIL_ADMIN_TOKEN), else Redis and PostgreSQL directly. */
  journal: ['adminUrl', 'databaseUrl', 'dbSchema', 'journalQueue'],
  /** `worker` and `dev`: with ANVIL_DATABASE_URL, the event journal (`NESTED.journal`)… */
  workerJournal: ['databaseUrl', 'dbSchema', 'journalRetentionDays', 'journalGroupCommit', 'journalQueue', 'journalSubjectPath'],
  /** …and the outbox dispatched and outgoing webhooks delivered: counted only with the database. */
  workerOutbound: ['outboundRetentionDays', 'outboxMaxAttempts', 'outboxRetryBaseMs', 'outboundRetrySchedule', 'encryptionKey'],
  /** `worker` and `dev`: where operational events link to, for the operator and for a tenant. */
  workerLinks: ['consoleUrl', 'portalPublicUrl'],
  /** `messages resend`: the attempts of the delivery jobs a re-send makes. */
  resend: ['outboundRetrySchedule'],
  /** `anvil dev`: where its outgoing webhooks may go (it allows loopback and private networks unless told). */
  devOutbound: ['outboundAllowNets'],
  /** `anvil migrate`: PostgreSQL, and what it logs. */
  database: ['databaseUrl', 'dbSchema', 'logLevel']
} as const satisfies Record<string, readonly SettingKey[]>

/**
 * The rows a configuration nests under an option's own names: the one place each is mapped. The loaders read
 * them with readFields (cli/config/settings.ts), and their types follow from the rows.
 */
export const NESTED = {
  /** `serve`: the admin API, on with its token; a port of its own, or the main port. */
  admin: { token: 'adminToken', port: 'adminPort' },
  /** `serve`: `anvilAdmin`'s `portal` options. */
  portal: { publicUrl: 'portalPublicUrl', frameAncestors: 'portalFrameAncestors', theme: 'portalTheme', limits: 'portalLimits' },
  /** `worker` and `dev`: the event journal, on with a database. */
  journal: { databaseUrl: 'databaseUrl', dbSchema: 'dbSchema', retentionDays: 'journalRetentionDays', groupCommit: 'journalGroupCommit', queue: 'journalQueue', subjectPath: 'journalSubjectPath' },
  /** `events`, `replay`, `messages`, `event-types` and `portal`: the admin API to talk to (its base URL) and its token. */
  adminApi: { url: 'adminUrl', token: 'adminToken' }
} as const satisfies Record<string, Readonly<Record<string, SettingKey>>>

/** `anvil dev` runs on a laptop: loopback, and a Redis found or started for it. */
export const DEV_DEFAULTS: DefaultsShown = {
  host: { default: DEFAULT_DEV_HOST },
  redisUrl: { shown: `${SETTINGS.redisUrl.default as string} if a Redis answers there, else a private redis-server` }
}

/** `anvil worker` listens for its health probes and metrics only. */
export const WORKER_HTTP: DefaultsShown = {
  host: { description: 'address of the health and metrics server' },
  port: { description: 'port of the health and metrics server' }
}

/** Undefined for a setting with no flag (a secret, read from its variable only). */
export function settingOption (key: SettingKey, shown: DefaultsShown = {}): Option | undefined {
  const setting = SETTINGS[key]
  const own = shown[key] ?? {}
  if (setting.flag === undefined) return undefined
  const option = new Option(`${setting.flag} ${setting.value ?? '<value>'}`, own.description ?? setting.description)
  if (setting.env !== undefined) option.env(setting.env)
  const value = own.default ?? setting.default
  if (value !== undefined) option.default(value, own.shown ?? setting.defaultShown ?? value)
  return option
}

export function addSettings (command: Command, keys: readonly SettingKey[], shown: DefaultsShown = {}): Command {
  for (const key of keys) {
    const option = settingOption(key, shown)
    if (option !== undefined) command.addOption(option)
  }
  return command
}

/** The flags typed on the command line: not the defaults or the variables commander also knows of. */
export function givenFlags (command: Command): Flags {
  const given: Flags = {}
  for (const option of command.options) {
    const key = option.attributeName()
    if (command.getOptionValueSource(key) === 'cli') given[key] = command.getOptionValue(key)
  }
  return given
}

export const addSharedOptions = (command: Command, shown?: DefaultsShown): Command => addSettings(command, SETTING_GROUPS.shared, shown)
export const addIngressOptions = (command: Command, shown?: DefaultsShown): Command => addSettings(command, SETTING_GROUPS.ingress, shown)
export const addWorkerOptions = (command: Command): Command =>
  addSettings(command, [...SETTING_GROUPS.worker, ...SETTING_GROUPS.workerJournal, ...SETTING_GROUPS.workerOutbound, ...SETTING_GROUPS.workerLinks])
export const addStallOptions = (command: Command): Command => addSettings(command, SETTING_GROUPS.stall)
export const addDeadLetterRetentionOptions = (command: Command): Command => addSettings(command, SETTING_GROUPS.deadLetterRetention)
export const addRetentionOptions = (command: Command): Command =>
  addDeadLetterRetentionOptions(addSettings(command, SETTING_GROUPS.jobRetention))
export const addObservabilityOptions = (command: Command): Command => addSettings(command, SETTING_GROUPS.observability)
export const addForwardOptions = (command: Command): Command => addSettings(command, SETTING_GROUPS.forward)
export const addWorkerHttpOptions = (command: Command): Command => addSettings(command, SETTING_GROUPS.workerHttp, WORKER_HTTP)
