import { setTimeout as sleep } from 'node:timers/promises'
import type { WorkerCommandConfig } from './config/load-config.js'
import { workerOptions } from './config/worker-options.js'
import { DEFAULT_QUEUE_NAME, DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import { patientlyFor } from './redis-patience.js'
import { createWorker, type WebhookHandler } from '../src/worker/worker.js'
import { errors } from '../src/shared/errors.js'
import anvilHealth from '../plugins/health.js'
import { loadHandler } from './handler-module.js'
import type { Outbound } from '../src/outbox/outbound.js'
import { Lifecycle } from './lifecycle.js'
import { bindQueues, type Binding } from './deployment.js'
import { createLogger, throttleRepeats } from './logging.js'
import { closeGracefully, createApp, listen, registerMetrics, sampledQueue } from './server.js'
import { setUpTracing } from './tracing.js'

export const NO_HANDLER_WARNING = 'anvil worker: no --handler: inbound events are not consumed here and wait in Redis; only outgoing webhooks are delivered (give --handler, or --role outbound for an outgoing-only worker)'
/** On a shutdown before Redis was ever reached, how long closing the idle worker may take. */
export const UNSTARTED_CLOSE_MS = 1000

/**
 * The handler the worker runs: the user's module, the forwarder of the sources that forward (which hands
 * the other sources' events to the module), or both; none when the process only sends outgoing webhooks
 * (`--role outbound` ignores --handler and the sources, so every deployment can share one command line).
 */
async function workerHandler (config: WorkerCommandConfig, handlerPath: string | undefined): Promise<{ handler?: WebhookHandler, file?: string, close?: () => Promise<void> }> {
  if (config.role === 'outbound') return {}
  const loaded = handlerPath === undefined ? undefined : await loadHandler(handlerPath)
  const forwarding = (config.sources ?? []).some((source) => source.forward !== undefined)
  if (!forwarding) {
    if (loaded !== undefined || (config.databaseUrl !== undefined && config.role === 'all')) return loaded ?? {}
    throw new errors.INVALID_CONFIG(config.role === 'inbound'
      ? 'anvil worker --role inbound needs --handler or a sources file (ANVIL_CONFIG) whose sources forward'
      : 'anvil worker needs --handler, a sources file (ANVIL_CONFIG) whose sources forward, or ANVIL_DATABASE_URL (outgoing webhooks)')
  }
  // Loaded only when a source forwards (it brings the SSRF guard and undici).
  const { createForwarder } = await import('../src/forward/create-forwarder.js')
  const forwarder = createForwarder(config.sources ?? [], { allowNets: config.forwardAllowNets, fallback: loaded?.handler })
  return { handler: forwarder.handler, file: loaded?.file, close: forwarder.close }
}

/**
 * `anvil worker --handler ./module.js`: runs the user's handler (and forwards the events of sources that
 * forward) on the queue until SIGTERM, with health and metrics on HOST:PORT. The HTTP side starts first, so while Redis is not reachable yet the process
 * stays up, retries, and answers 503 on /health/ready instead of crashing in a loop.
 */
export async function runWorker (config: WorkerCommandConfig, handlerPath: string | undefined): Promise<void> {
  const log = createLogger(config.logLevel, { logPayloads: config.logPayloads })
  const { handler, file, close: closeForwarder } = await workerHandler(config, handlerPath)
  // Said at start: with the database alone the inbound queue fills in Redis and nothing else tells.
  if (handler === undefined && config.role === 'all') {
    log.warn({ queue: config.queueName ?? DEFAULT_QUEUE_NAME }, NO_HANDLER_WARNING)
  }
  const redisUrl = config.redisUrl ?? DEFAULT_REDIS_URL
  const life = new Lifecycle(log)
  life.closeOnSignals(config.shutdownTimeoutMs)
  try {
    const tracing = await setUpTracing(config, 'anvil-worker', log, life)
    // The outgoing side (the outbox, the delivery worker, undici) is loaded only when this process runs it.
    const sending = config.databaseUrl === undefined || config.role === 'inbound'
      ? undefined
      : (await import('./outbound-worker.js')).startOutbound({ ...config, databaseUrl: config.databaseUrl, redisUrl }, log, life, tracing?.telemetry)
    const outgoing = sending?.outbound
    // With a database, the queues this process consumes are claimed for its deployment before any job is taken.
    const binding: Binding = {
      redisUrl,
      prefix: config.prefix,
      queues: [...(handler === undefined ? [] : [config.queueName ?? DEFAULT_QUEUE_NAME]), ...(sending === undefined ? [] : [sending.queueName])],
      ...(config.databaseUrl === undefined ? {} : { database: { url: config.databaseUrl, schema: config.dbSchema } })
    }
    const bound = async (): Promise<boolean> => {
      if (!await bindQueues(binding, log, life)) return false
      sending?.start()
      return true
    }
    if (handler === undefined) return await serveProbes(config, redisUrl, log, life, outgoing, bound, sending?.delivery)
    const worker = createWorker(handler, { ...workerOptions(config, redisUrl, tracing?.telemetry), logger: throttleRepeats(log) })
    if (closeForwarder !== undefined) life.add('forwarder', closeForwarder)
    // Ready while each worker of the process takes jobs (a host clock off from Redis's stops both).
    const delivery = sending?.delivery
    const workers = delivery === undefined ? worker : { get running () { return worker.running && delivery.running } }
    // Closed in reverse: the worker first (active jobs get the grace period) while probes still answer.
    const app = await startProbes(config, redisUrl, log, life, outgoing, workers)
    // Never connected: no job is active, so there is nothing to wait for (BullMQ's close would wait for Redis).
    let started = false
    life.add('worker', async () => {
      if (started) return await worker.close()
      await Promise.race([worker.close(), sleep(UNSTARTED_CLOSE_MS, undefined, { ref: false })])
    })
    const port = await listen(app, config.host, config.port)
    log.info({ host: config.host, port }, 'anvil worker: health and metrics listening')

    // Resolves once Redis answers; ioredis reconnects forever in between.
    const running = await patientlyFor((async () => {
      if (!await bound()) return false
      await worker.start()
      return true
    })(), redisUrl, (redis) => log.warn({ redis }, 'anvil worker: Redis is not reachable yet; retrying (not ready until it answers)'))
    if (!running) return
    started = true
    const forwards = (config.sources ?? []).filter((source) => source.forward !== undefined).map((source) => source.name ?? source.provider)
    log.info({ role: config.role, handler: file, forwards: forwards.length > 0 ? forwards : undefined, queue: config.queueName, concurrency: config.concurrency }, 'anvil worker: started')
  } catch (err) {
    await life.close()
    throw err
  }
}

/**
 * The health app (not yet listening) and, on its own port when one is set, the metrics server (listening): both
 * closed by `life`. The metrics plugin reads the outbox gauges from `anvilOutbound`.
 */
async function startProbes (
  config: WorkerCommandConfig, redisUrl: string, log: ReturnType<typeof createLogger>, life: Lifecycle, outgoing: Outbound | undefined, worker?: { readonly running: boolean }
): Promise<ReturnType<typeof createApp>> {
  const app = createApp(log)
  if (outgoing !== undefined) app.decorate('anvilOutbound', outgoing)
  await app.register(anvilHealth, { redis: redisUrl, ...(worker === undefined ? {} : { worker }) })
  const metricsApp = await registerMetrics(app, config, sampledQueue(config), log)
  life.add('http', async () => await closeGracefully(app))
  if (metricsApp !== undefined) {
    life.add('metrics server', async () => await closeGracefully(metricsApp))
    const metricsPort = await listen(metricsApp, config.host, config.metricsPort ?? 0)
    log.info({ host: config.host, port: metricsPort, path: config.metricsPath }, 'anvil worker: metrics listening')
  }
  return app
}

/** The outgoing-only worker: health (Redis, and the delivery worker taking jobs) and metrics, no inbound queue. */
async function serveProbes (
  config: WorkerCommandConfig, redisUrl: string, log: ReturnType<typeof createLogger>, life: Lifecycle, outgoing: Outbound | undefined, bound: () => Promise<boolean>,
  delivery?: { readonly running: boolean }
): Promise<void> {
  const app = await startProbes(config, redisUrl, log, life, outgoing, delivery)
  const port = await listen(app, config.host, config.port)
  log.info({ host: config.host, port }, 'anvil worker: health and metrics listening')
  if (!await bound()) return
  log.info({ role: config.role, outgoing: true }, 'anvil worker: started')
}
