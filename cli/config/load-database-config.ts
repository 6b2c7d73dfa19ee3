/**
 * The configuration of the commands that read PostgreSQL or the admin API rather than serve: `migrate`,
 * `events` and `replay`. The same settings table and rules as cli/config/load-config.ts.
 */
import { DEFAULT_ADMIN_PREFIX } from '../../src/shared/constants.js'
import { errors } from '../../src/shared/errors.js'
import { SETTINGS, nameOf, read, valueOf, type Env, type Flags, type LogLevel } from './settings.js'
import { common, optional, type CommonConfig } from './load-config.js'
import type { JournalQueue } from '../../src/journal/journal-options.js'

/** `anvil migrate`, and every command that uses PostgreSQL: the database is required there. */
export interface DatabaseConfig {
  databaseUrl: string
  dbSchema?: string
}

export function loadMigrateConfig (env: Env, flags: Flags = {}): DatabaseConfig & { logLevel: LogLevel } {
  const databaseUrl = read(SETTINGS.databaseUrl, env, flags)
  if (databaseUrl === undefined) {
    throw new errors.INVALID_CONFIG(`${SETTINGS.databaseUrl.env} (or ${SETTINGS.databaseUrl.flag}) is required: the PostgreSQL URL, e.g. postgres://user@host:5432/db`)
  }
  return { databaseUrl, dbSchema: read(SETTINGS.dbSchema, env, flags), logLevel: valueOf(SETTINGS.logLevel, env, flags) }
}

/** `anvil replay`: by id or --all on the dead letters, or --filter through the journal's settings. */
export type ReplayConfig = JournalCliConfig

export function loadReplayConfig (env: Env, flags: Flags = {}): ReplayConfig {
  return loadJournalConfig(env, flags)
}

/**
 * `anvil events` and `anvil replay --filter`: the admin API when ANVIL_ADMIN_URL (--url) is set, with
 * ANVIL_ADMIN_TOKEN; else the journal in PostgreSQL (ANVIL_DATABASE_URL) or, without it, the dead letters in Redis.
 */
export interface JournalCliConfig extends CommonConfig {
  admin?: { url: string, token: string }
  databaseUrl?: string
  dbSchema?: string
  /** ANVIL_JOURNAL_QUEUE: where replays queue their events. */
  journalQueue?: JournalQueue
  /** `events list --limit`. */
  limit?: number
}

/** The admin API's base: a server's bare URL (`http://host:3000`) means its default prefix, `/admin`. */
export function adminBase (url: string): string {
  const trimmed = url.replace(/\/+$/, '')
  return new URL(trimmed).pathname === '/' ? trimmed + DEFAULT_ADMIN_PREFIX : trimmed
}

export function loadJournalConfig (env: Env, flags: Flags = {}): JournalCliConfig {
  const url = read(SETTINGS.adminUrl, env, flags)
  const token = read(SETTINGS.adminToken, env, flags)
  if (url !== undefined && token === undefined) {
    throw new errors.INVALID_CONFIG(`${nameOf(SETTINGS.adminUrl, flags)} needs ${SETTINGS.adminToken.env as string}: the admin API's token`)
  }
  return {
    ...common(env, flags),
    admin: url === undefined || token === undefined ? undefined : { url: adminBase(url), token },
    databaseUrl: read(SETTINGS.databaseUrl, env, flags),
    dbSchema: read(SETTINGS.dbSchema, env, flags),
    ...optional('journalQueue', read(SETTINGS.journalQueue, env, flags)),
    limit: read(SETTINGS.limit, env, flags)
  }
}

/** The admin API (--url), else PostgreSQL, which is then required: `where` says what it holds. */
export type AdminOrDatabaseConfig = JournalCliConfig & ({ admin: { url: string, token: string } } | { admin?: undefined, databaseUrl: string })

function adminOrDatabase (config: JournalCliConfig, where: string): AdminOrDatabaseConfig {
  if (config.admin !== undefined) return { ...config, admin: config.admin }
  if (config.databaseUrl === undefined) {
    throw new errors.INVALID_CONFIG(`${SETTINGS.databaseUrl.env as string} (or ${SETTINGS.adminUrl.flag as string} with ${SETTINGS.adminToken.env as string}) is required: ${where}`)
  }
  return { ...config, admin: undefined, databaseUrl: config.databaseUrl }
}

/** `anvil messages resend`: the admin API, else the outbox in PostgreSQL (required then) and the delivery queue's Redis. */
export type MessagesCliConfig = AdminOrDatabaseConfig & {
  /** ANVIL_OUTBOUND_RETRY_SCHEDULE: the attempts of the jobs a re-send makes. */
  outboundRetrySchedule?: number[]
}

export function loadMessagesConfig (env: Env, flags: Flags = {}): MessagesCliConfig {
  const schedule = read(SETTINGS.outboundRetrySchedule, env, flags)
  return { ...adminOrDatabase(loadJournalConfig(env, flags), 'the outbox is in PostgreSQL'), ...(schedule === undefined ? {} : { outboundRetrySchedule: schedule }) }
}

/** `anvil event-types export`: the admin API, which lists the types defined in code too, else the stored types in PostgreSQL. */
export function loadEventTypesConfig (env: Env, flags: Flags = {}): AdminOrDatabaseConfig {
  return adminOrDatabase(loadJournalConfig(env, flags), 'the catalog is in PostgreSQL (the admin API lists the types defined in code too)')
}
