/** What each command's configuration holds, once loaded and checked (cli/config/load-config.ts). */
import type { PortalTheme } from '../../src/portal/portal-theme.js'
import type { IdempotencyStrategy } from '../../src/inbound/idempotency.js'
import type { SourceOptions } from '../../src/inbound/ingress-options.js'
import type { PortalLimits } from '../../src/portal/portal-limits.js'
import type { GroupCommitOptions, JournalOptions, JournalQueue } from '../../src/journal/journal-options.js'
import type { Retention } from '../../src/queue/queue-settings.js'
import type { Loaded, WorkerRole } from './settings.js'
import type { SETTING_GROUPS } from './options.js'

/**
 * The groups read whole are typed by their rows (cli/config/settings.ts `Loaded`): a setting added to the table
 * and its group is in the configuration, typed, with nothing else to write.
 */
type Group<G extends keyof typeof SETTING_GROUPS> = Loaded<(typeof SETTING_GROUPS)[G][number]>

/** `redisUrl` is undefined when neither REDIS_URL nor --redis-url is set: `dev` probes, the others use the default URL. */
export type CommonConfig = Group<'shared'>

/** For the long-running commands (serve, worker, dev): where metrics are served (false: nowhere), logs, tracing. */
export type ObservabilityConfig = Group<'observability'>

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

export type WorkerConfig = Group<'worker'> & {
  /** The event journal: on when ANVIL_DATABASE_URL is set. */
  journal?: { databaseUrl: string, dbSchema?: string, retentionDays?: number, groupCommit?: GroupCommitOptions, queue?: JournalQueue }
  /** ANVIL_CONSOLE_URL: the console's address, for the links of operational events (with a database). */
  consoleUrl?: string
  /** From ANVIL_PORTAL_PUBLIC_URL: the portal page's address, for the links of a tenant's own operational events. */
  portalUrl?: string
}

/** The worker's `journal` option from its configuration. */
export function journalOptionsOf (journal: NonNullable<WorkerConfig['journal']>): JournalOptions {
  return {
    database: journal.databaseUrl, schema: journal.dbSchema, retentionDays: journal.retentionDays,
    ...(journal.groupCommit === undefined ? {} : { groupCommit: journal.groupCommit }),
    ...(journal.queue === undefined ? {} : { queue: journal.queue })
  }
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
  retention?: Partial<Retention>
}

/** `anvil serve`'s admin API (plugins/admin): off unless ANVIL_ADMIN_TOKEN is set. */
export interface AdminConfig {
  /** The token, and a port of its own (ANVIL_ADMIN_PORT) or undefined for the main port. */
  admin?: { token: string, port?: number }
  /** The PostgreSQL the admin API's features (outgoing webhooks, the journal) use; undefined: none of them. */
  databaseUrl?: string
  dbSchema?: string
  /** ANVIL_JOURNAL_QUEUE: `postgres`, the ingress inserts events into the journal's queue (with the database) and replays go there. */
  journalQueue?: JournalQueue
  /** ANVIL_OUTBOUND_RETRY_SCHEDULE: the attempts of the delivery jobs a re-send makes. */
  outboundRetrySchedule?: number[]
  /** ANVIL_PORTAL_PUBLIC_URL, ANVIL_PORTAL_FRAME_ANCESTORS, ANVIL_PORTAL_THEME and ANVIL_PORTAL_LIMITS: `anvilAdmin`'s `portal` options. */
  portal?: { publicUrl?: string, frameAncestors?: string[], theme?: PortalTheme, limits?: PortalLimits }
}

/** The outgoing side's schedules; undefined: the core's defaults. */
export interface OutboundSchedules {
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
export type WorkerCommandConfig = CommonConfig & WorkerConfig & StallConfig & RetentionConfig & ObservabilityConfig & OutboundSchedules & {
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
export type DevConfig = CommonConfig & IngressConfig & WorkerConfig & RetentionConfig & ObservabilityConfig & OutboundSchedules & {
  secret: string
  /** With ANVIL_DATABASE_URL, dev migrates it and sends outgoing webhooks too. */
  databaseUrl?: string
  dbSchema?: string
  outboundRetentionDays?: number
  outboundAllowNets?: string
  /** True when WEBHOOK_SECRET was unset and DEV_SECRET is in use. */
  devSecret: boolean
}
