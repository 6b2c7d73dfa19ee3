import type { Logger } from 'pino'
import { createDeliveryWorker, type DeliveryWorker } from '../src/delivery/delivery-worker.js'
import { createOutbound, outboundInternals, type Outbound } from '../src/outbox/outbound.js'
import { portalPage, type WorkerCommandConfig } from './config/load-config.js'
import type { Lifecycle } from './lifecycle.js'
import type { Telemetry } from '../src/queue/telemetry.js'

/** What the outgoing side takes of `anvil worker`'s or `anvil dev`'s configuration; undefined: the core's defaults. */
export type OutboundConfig = Partial<Pick<WorkerCommandConfig,
  'dbSchema' | 'prefix' | 'outboundAllowNets' | 'outboundRetentionDays' | 'lockDurationMs' | 'stalledIntervalMs' | 'consoleUrl' |
  'portalPublicUrl' | 'outboxMaxAttempts' | 'outboxRetryBaseMs' | 'outboundRetrySchedule' | 'encryptionKey'
>> & { databaseUrl: string, redisUrl: string }

/**
 * The outgoing side of `anvil worker` (ANVIL_DATABASE_URL set): the outbox dispatcher, its retention and the
 * delivery worker on the database's store. Closed by the lifecycle, delivery first, so attempts in flight are still recorded.
 * The service is returned for the metrics (the outbox gauges read it), with its queue's name; `start` begins dispatching and delivering,
 * once the caller has claimed the outbound queue (cli/deployment.ts).
 */
export function startOutbound (config: OutboundConfig, log: Logger, life: Lifecycle, telemetry?: Telemetry): { outbound: Outbound, delivery: DeliveryWorker, queueName: string, start: () => void } {
  const prefix = config.prefix === undefined ? {} : { prefix: config.prefix }
  // On the jobs this process's dispatcher makes, which carry it to whichever delivery worker takes them.
  const schedule = config.outboundRetrySchedule === undefined ? {} : { retrySchedule: config.outboundRetrySchedule }
  const outbound = createOutbound({
    database: config.databaseUrl, ...(config.dbSchema === undefined ? {} : { schema: config.dbSchema }), redis: config.redisUrl, ...prefix, logger: log,
    ...(config.outboundRetentionDays === undefined ? {} : { retentionDays: config.outboundRetentionDays }),
    ...(config.consoleUrl === undefined ? {} : { consoleUrl: config.consoleUrl }),
    ...(config.portalPublicUrl === undefined ? {} : { portalUrl: portalPage(config.portalPublicUrl) }),
    ...schedule,
    ...(telemetry === undefined ? {} : { telemetry }),
    ...(config.encryptionKey === undefined ? {} : { encryptionKey: config.encryptionKey }),
    dispatch: {
      ...(config.outboxMaxAttempts === undefined ? {} : { attempts: config.outboxMaxAttempts }),
      ...(config.outboxRetryBaseMs === undefined ? {} : { retryBaseMs: config.outboxRetryBaseMs })
    }
  })
  life.add('outbox', async () => await outbound.close())
  const { store, queue } = outboundInternals(outbound)
  const delivery = createDeliveryWorker({
    redis: config.redisUrl, store, ...prefix, logger: log,
    ...(config.outboundAllowNets === undefined ? {} : { allowNets: config.outboundAllowNets }),
    ...(config.lockDurationMs === undefined ? {} : { lockDurationMs: config.lockDurationMs }),
    ...(config.stalledIntervalMs === undefined ? {} : { stalledIntervalMs: config.stalledIntervalMs }),
    ...(telemetry === undefined ? {} : { telemetry }),
    onEndpointDisabled: (event) => log.warn(event, 'anvil worker: endpoint disabled')
  })
  life.add('delivery', async () => await delivery.close())
  function start (): void {
    outbound.startRetention()
    // Not awaited: with PostgreSQL or Redis away the probes must still answer (not ready) while both reconnect.
    Promise.all([outbound.dispatcher.start(), delivery.start()])
      .then(() => log.info({ queue: queue.name }, 'anvil worker: dispatching and delivering outgoing webhooks'))
      .catch((err: Error) => log.error({ err: err.message }, 'anvil worker: the outgoing side did not start'))
  }
  return { outbound, delivery, queueName: queue.name, start }
}
