/**
 * The configuration of the commands that read PostgreSQL or the admin API rather than serve: `migrate`,
 * `events` and `replay`. The same settings table and rules as cli/config/load-config.ts.
 */
import { errors } from '../../src/shared/errors.js'
import { SETTINGS, nameOf, readFields, readGroup, type Env, type Flags, type Loaded, type Needs } from './settings.js'
import { NESTED, SETTING_GROUPS } from './options.js'
import { common, type CommonConfig, type Group, type Nested } from './load-config.js'

export { adminBase } from './outbound-settings.js'

/** `anvil migrate`, and every command that uses PostgreSQL: the database is required there. */
export type DatabaseConfig = Needs<Group<'database'>, 'databaseUrl'>

export function loadMigrateConfig (env: Env, flags: Flags = {}): DatabaseConfig {
  const config = readGroup(SETTING_GROUPS.database, env, flags)
  if (config.databaseUrl === undefined) {
    throw new errors.INVALID_CONFIG(`${SETTINGS.databaseUrl.env} (or ${SETTINGS.databaseUrl.flag}) is required: the PostgreSQL URL, e.g. postgres://user@host:5432/db`)
  }
  return { ...config, databaseUrl: config.databaseUrl }
}

/** `anvil replay`: by id or --all on the dead letters, or --filter through the journal's settings. */
export type ReplayConfig = JournalCliConfig

export function loadReplayConfig (env: Env, flags: Flags = {}): ReplayConfig {
  return loadJournalConfig(env, flags)
}

/**
 * `anvil events` and `anvil replay --filter`: the admin API when ANVIL_ADMIN_URL (--url) is set, with
 * ANVIL_ADMIN_TOKEN; else the journal in PostgreSQL (ANVIL_DATABASE_URL) or, without it, the dead letters in Redis.
 * `limit`: `events list --limit`.
 */
export type JournalCliConfig = CommonConfig & Group<'journal', 'adminUrl'> & Loaded<'limit'> & {
  /** The admin API's base URL (a bare server URL gains /admin) and its token. */
  admin?: Needs<Nested<'adminApi'>, 'url' | 'token'>
}

export function loadJournalConfig (env: Env, flags: Flags = {}): JournalCliConfig {
  const api = readFields(NESTED.adminApi, env, flags)
  if (api?.url !== undefined && api.token === undefined) {
    throw new errors.INVALID_CONFIG(`${nameOf(SETTINGS.adminUrl, flags)} needs ${SETTINGS.adminToken.env as string}: the admin API's token`)
  }
  const { adminUrl: _url, ...journal } = readGroup(SETTING_GROUPS.journal, env, flags)
  return {
    ...common(env, flags),
    admin: api?.url === undefined || api.token === undefined ? undefined : { url: api.url, token: api.token },
    ...journal,
    ...readGroup(['limit'], env, flags)
  }
}

/** The admin API (--url), else PostgreSQL, which is then required: `where` says what it holds. */
export type AdminOrDatabaseConfig = JournalCliConfig & (Needs<JournalCliConfig, 'admin'> | (Needs<JournalCliConfig, 'databaseUrl'> & { admin?: undefined }))

function adminOrDatabase (config: JournalCliConfig, where: string): AdminOrDatabaseConfig {
  if (config.admin !== undefined) return { ...config, admin: config.admin }
  if (config.databaseUrl === undefined) {
    throw new errors.INVALID_CONFIG(`${SETTINGS.databaseUrl.env as string} (or ${SETTINGS.adminUrl.flag as string} with ${SETTINGS.adminToken.env as string}) is required: ${where}`)
  }
  return { ...config, admin: undefined, databaseUrl: config.databaseUrl }
}

/** `anvil messages resend`: the admin API, else the outbox in PostgreSQL (required then) and the delivery queue's Redis. */
export type MessagesCliConfig = AdminOrDatabaseConfig & Group<'resend'>

export function loadMessagesConfig (env: Env, flags: Flags = {}): MessagesCliConfig {
  return { ...adminOrDatabase(loadJournalConfig(env, flags), 'the outbox is in PostgreSQL'), ...readGroup(SETTING_GROUPS.resend, env, flags) }
}

/** `anvil event-types export`: the admin API, which lists the types defined in code too, else the stored types in PostgreSQL. */
export function loadEventTypesConfig (env: Env, flags: Flags = {}): AdminOrDatabaseConfig {
  return adminOrDatabase(loadJournalConfig(env, flags), 'the catalog is in PostgreSQL (the admin API lists the types defined in code too)')
}

/** `anvil subjects erase` and `anvil tenants delete`: the admin API, else the outbox and the journal in PostgreSQL with their Redis. */
export function loadErasureConfig (env: Env, flags: Flags = {}): AdminOrDatabaseConfig {
  return adminOrDatabase(loadJournalConfig(env, flags), 'erasure works on the outbox and the journal in PostgreSQL')
}
