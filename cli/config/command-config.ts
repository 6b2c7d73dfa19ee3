/** What each command's configuration holds, once loaded and checked (cli/config/load-config.ts). */
import { DEFAULT_ADMIN_PREFIX } from '../../src/shared/constants.js'
import { portalPageUrl } from '../../src/portal/portal-options.js'
import type { SourceOptions } from '../../src/inbound/ingress-options.js'
import type { GroupCommitOptions, JournalOptions } from '../../src/journal/journal-options.js'
import type { Fields, Loaded, Needs } from './settings.js'
import type { NESTED, SETTING_GROUPS } from './options.js'

/**
 * A group as its configuration holds it, typed by its rows (cli/config/settings.ts `Loaded`): a setting added to
 * the table and its group is in the configuration, typed, with nothing else to write. `But` are the group's rows
 * held elsewhere: nested under an option's names (`NESTED`), or read into something else (the sources file).
 */
export type Group<G extends keyof typeof SETTING_GROUPS, But extends string = never> = Loaded<Exclude<(typeof SETTING_GROUPS)[G][number], But>>

/** The rows `NESTED[N]` nests, under its names; typed by the rows. */
export type Nested<N extends keyof typeof NESTED> = Fields<(typeof NESTED)[N]>
type NestedKeys<N extends keyof typeof NESTED> = (typeof NESTED)[N][keyof (typeof NESTED)[N]]

/** `redisUrl` is undefined when neither REDIS_URL nor --redis-url is set: `dev` probes, the others use the default URL. */
export type CommonConfig = Group<'shared'>

/** For the long-running commands (serve, worker, dev): where metrics are served (false: nowhere), logs, tracing. */
export type ObservabilityConfig = Group<'observability'>

/** The sources file (`--config` / ANVIL_CONFIG), read: it replaces secret, path and idempotency. */
export interface SourcesConfig {
  sources?: SourceOptions[]
}

/** Unset optional fields fall back to the core's defaults (src/shared/constants.ts), so they live in one place. */
export type IngressConfig = Group<'ingress', 'config'> & SourcesConfig & {
  /** WEBHOOK_SECRET (no row: it is never a flag, never quoted): the single `anvil` source. Unset when a sources file is given. */
  secret?: string
}

/** With a database (ANVIL_DATABASE_URL): the journal, the outbox dispatched and outgoing webhooks delivered. */
export type WorkerConfig = Group<'worker'> & Group<'workerLinks'> & Partial<Loaded<'databaseUrl' | 'dbSchema'> & Group<'workerOutbound'>> & {
  /** The event journal: on when ANVIL_DATABASE_URL is set (the database, shared with the outgoing side). */
  journal?: Needs<Nested<'journal'>, 'databaseUrl'>
}

/** The worker's `journal` option from its configuration. */
export function journalOptionsOf (journal: NonNullable<WorkerConfig['journal']>): JournalOptions {
  return {
    database: journal.databaseUrl, schema: journal.dbSchema, retentionDays: journal.retentionDays,
    ...(journal.groupCommit === undefined ? {} : { groupCommit: journal.groupCommit satisfies GroupCommitOptions }),
    ...(journal.queue === undefined ? {} : { queue: journal.queue }),
    ...(journal.subjectPath === undefined ? {} : { subjectPath: journal.subjectPath })
  }
}

/** A tenant's own operational events link into the portal page that anvil serve offers under ANVIL_PORTAL_PUBLIC_URL, at its fixed admin prefix. */
export function portalPage (publicUrl: string | undefined): string | undefined {
  return publicUrl === undefined ? undefined : portalPageUrl(publicUrl, DEFAULT_ADMIN_PREFIX)
}

/**
 * `anvil worker`: how soon a job whose worker died or was forced to stop is taken back (its lock expires
 * after lockDurationMs; a check every stalledIntervalMs finds it). Undefined keeps BullMQ's 30 s each.
 */
export type StallConfig = Group<'stall'>

/**
 * How long finished jobs and dead letters stay in Redis: only what was set (the core fills in
 * DEFAULT_RETENTION), undefined when nothing was. `serve` stamps the job fields on every job it enqueues
 * where they differ from the defaults (which the worker applies); the worker prunes dead letters.
 */
export interface RetentionConfig {
  retention?: Partial<Group<'jobRetention'> & Group<'deadLetterRetention'>>
}

/** `anvil serve`'s admin API (plugins/admin): off unless ANVIL_ADMIN_TOKEN is set; the PostgreSQL its features use. */
export type AdminConfig = Group<'admin', NestedKeys<'admin'> | NestedKeys<'portal'>> & {
  /** The token, and a port of its own (ANVIL_ADMIN_PORT) or undefined for the main port. */
  admin?: Needs<Nested<'admin'>, 'token'>
  /** `anvilAdmin`'s `portal` options; undefined when none is set. */
  portal?: Nested<'portal'>
}

export type ServeConfig = CommonConfig & IngressConfig & RetentionConfig & ObservabilityConfig & AdminConfig & Group<'secrets'>

/** The worker serves health and metrics on HOST:PORT, so a probe can reach it; its sources file's sources are those that forward. */
export type WorkerCommandConfig = CommonConfig & WorkerConfig & StallConfig & RetentionConfig & ObservabilityConfig &
  Group<'workerHttp'> & Group<'workerRole'> & Group<'forward', 'config'> & SourcesConfig

export type DevConfig = CommonConfig & IngressConfig & WorkerConfig & RetentionConfig & ObservabilityConfig & Group<'devOutbound'> & {
  secret: string
  /** True when WEBHOOK_SECRET was unset and DEV_SECRET is in use. */
  devSecret: boolean
}
