import { setTimeout as sleep } from 'node:timers/promises'
import type { WorkerCommandConfig } from './config/load-config.js'
import { DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import { redactUrl } from '../src/redis/connect.js'
import { createWorker } from '../src/worker/worker.js'
import anvilHealth from '../plugins/health.js'
import { loadHandler } from './handler-module.js'
import { Lifecycle } from './lifecycle.js'
import { createLogger, throttleRepeats } from './logging.js'
import { closeGracefully, createApp, listen, registerMetrics, sampledQueue } from './server.js'
import { setUpTracing } from './tracing.js'

/** How long the first connection may take before the log says Redis is not there yet. */
export const REDIS_WAIT_NOTICE_MS = 2000
/** On a shutdown before Redis was ever reached, how long closing the idle worker may take. */
export const UNSTARTED_CLOSE_MS = 1000

/**
 * `anvil worker --handler ./module.js`: runs the user's handler on the queue until SIGTERM, with health
 * and metrics on HOST:PORT. The HTTP side starts first, so while Redis is not reachable yet the process
 * stays up, retries, and answers 503 on /health/ready instead of crashing in a loop.
 */
export async function runWorker (config: WorkerCommandConfig, handlerPath: string): Promise<void> {
  const log = createLogger(config.logLevel, { logPayloads: config.logPayloads })
  const { handler, file } = await loadHandler(handlerPath)
  const redisUrl = config.redisUrl ?? DEFAULT_REDIS_URL
  const life = new Lifecycle(log)
  life.closeOnSignals(config.shutdownTimeoutMs)
  try {
    const tracing = await setUpTracing(config, 'anvil-worker', log, life)
    const worker = createWorker(handler, {
      redis: redisUrl,
      queueName: config.queueName,
      prefix: config.prefix,
      concurrency: config.concurrency,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      lockDurationMs: config.lockDurationMs,
      stalledIntervalMs: config.stalledIntervalMs,
      deadAgeSeconds: config.retention?.deadAgeSeconds,
      logger: throttleRepeats(log),
      telemetry: tracing?.telemetry,
      journal: config.journal === undefined
        ? undefined
        : { database: config.journal.databaseUrl, schema: config.journal.dbSchema, retentionDays: config.journal.retentionDays }
    })
    const app = createApp(log)
    await app.register(anvilHealth, { redis: redisUrl, worker })
    const metricsApp = await registerMetrics(app, config, sampledQueue(config), log)
    // Closed in reverse: the worker first (active jobs get the grace period) while probes still answer.
    life.add('http', async () => await closeGracefully(app))
    if (metricsApp !== undefined) {
      life.add('metrics server', async () => await closeGracefully(metricsApp))
      await listen(metricsApp, config.host, config.metricsPort ?? 0)
    }
    // Never connected: no job is active, so there is nothing to wait for (BullMQ's close would wait for Redis).
    let started = false
    life.add('worker', async () => {
      if (started) return await worker.close()
      await Promise.race([worker.close(), sleep(UNSTARTED_CLOSE_MS, undefined, { ref: false })])
    })
    const port = await listen(app, config.host, config.port)
    log.info({ host: config.host, port }, 'anvil worker: health and metrics listening')

    const probe = setTimeout(() => {
      log.warn({ redis: redactUrl(redisUrl) }, 'anvil worker: Redis is not reachable yet; retrying (not ready until it answers)')
    }, REDIS_WAIT_NOTICE_MS)
    probe.unref()
    // Resolves once Redis answers; ioredis reconnects forever in between.
    await worker.start()
    started = true
    clearTimeout(probe)
    log.info({ handler: file, queue: config.queueName, concurrency: config.concurrency }, 'anvil worker: started')
  } catch (err) {
    await life.close()
    throw err
  }
}
