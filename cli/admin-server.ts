import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { Logger } from 'pino'
import anvilAdmin from '../plugins/admin/admin.js'
import { openDatabase, type Database } from '../src/db/database.js'
import { DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import type { AdminConfig, CommonConfig, IngressConfig } from './config/load-config.js'
import { outboundAdminFeature } from './outbound-admin.js'
import { createApp } from './server.js'
import { journalAdminRoutes } from '../plugins/journal/admin-routes.js'
import { openEventLog } from '../src/event-log/open-event-log.js'
import type { JournalQueue } from '../src/journal/journal-options.js'
import type { Telemetry } from '../src/queue/telemetry.js'

/** What a feature's admin routes may use; the database is open when ANVIL_DATABASE_URL is set. */
export interface AdminFeatureContext {
  database?: Database
  redis: string
  queueName?: string
  prefix?: string
  /** The delivery jobs' schedule (ANVIL_OUTBOUND_RETRY_SCHEDULE), for the jobs a re-send makes. */
  outboundRetrySchedule?: number[]
  /** ANVIL_ENCRYPTION_KEY: what endpoints keep for their receivers is sealed and opened with it. */
  encryptionKey?: string
  /** ANVIL_JOURNAL_QUEUE: where journal replays queue their events. */
  journalQueue?: JournalQueue
  /** ANVIL_TRACING: published messages' spans (src/outbox/outbound-options.ts `telemetry`). */
  telemetry?: Telemetry
  log: Logger
}

/** A feature's admin routes, or undefined when what it needs is not configured (its routes then answer 404). */
export type AdminFeature = (context: AdminFeatureContext) => FastifyPluginAsync | undefined | Promise<FastifyPluginAsync | undefined>

/** The journal's routes: on the journal with a database, on the dead letters in Redis without one. */
export const journalFeature: AdminFeature = (context) => journalAdminRoutes(openEventLog({
  redis: context.redis,
  database: context.database?.pool,
  schema: context.database?.schema,
  queueName: context.queueName,
  prefix: context.prefix,
  ...(context.journalQueue === undefined ? {} : { journalQueue: context.journalQueue })
}))

/** The feature route sets `anvil serve` offers in its admin API: each feature (journal, outgoing webhooks) adds its line. */
export const ADMIN_FEATURES: AdminFeature[] = [journalFeature, outboundAdminFeature]

/**
 * The admin API, when ANVIL_ADMIN_TOKEN is set: on `app`, or on an app of its own for ANVIL_ADMIN_PORT (returned,
 * for the caller to listen on and close). The database is closed with the app that serves the admin API.
 */
export async function registerAdmin (
  app: FastifyInstance, config: CommonConfig & Pick<IngressConfig, 'requestTimeoutMs' | 'trustProxy'> & AdminConfig, log: Logger,
  features: readonly AdminFeature[] = ADMIN_FEATURES, telemetry?: Telemetry
): Promise<FastifyInstance | undefined> {
  if (config.admin === undefined) return undefined
  const host = config.admin.port === undefined ? app : createApp(log, config.requestTimeoutMs, config.trustProxy)
  const database = config.databaseUrl === undefined ? undefined : openDatabase(config.databaseUrl, { schema: config.dbSchema })
  if (database !== undefined) host.addHook('onClose', async () => await database.close())
  const context: AdminFeatureContext = {
    database, redis: config.redisUrl ?? DEFAULT_REDIS_URL, queueName: config.queueName, prefix: config.prefix, log,
    ...(config.journalQueue === undefined ? {} : { journalQueue: config.journalQueue }),
    ...(config.outboundRetrySchedule === undefined ? {} : { outboundRetrySchedule: config.outboundRetrySchedule }),
    ...(telemetry === undefined ? {} : { telemetry }),
    ...(config.encryptionKey === undefined ? {} : { encryptionKey: config.encryptionKey })
  }
  const routes: FastifyPluginAsync[] = []
  for (const feature of features) {
    const made = await feature(context)
    if (made !== undefined) routes.push(made)
  }
  // Console sessions in Redis, which `serve` always has: a logout holds on every replica.
  await host.register(anvilAdmin, {
    token: config.admin.token, routes, redis: context.redis, ...(config.prefix === undefined ? {} : { redisPrefix: config.prefix }),
    // Portal tokens' revocations live in the same database: on when ANVIL_DATABASE_URL is set.
    portal: { ...config.portal, ...(database === undefined ? {} : { database: database.pool, schema: database.schema }) }
  })
  return host === app ? undefined : host
}
