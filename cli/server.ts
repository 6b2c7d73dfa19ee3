import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { Registry } from 'prom-client'
// The ingress plugin itself, not the package's root, which loads every feature (outbox, catalog, admin…).
import anvil from '../plugins/ingress.js'
import anvilHealth from '../plugins/health.js'
import anvilMetrics from '../plugins/metrics/metrics.js'
import type { CommonConfig, IngressConfig, ObservabilityConfig, RetentionConfig } from './config/load-config.js'
import { DEFAULT_REQUEST_TIMEOUT_MS } from './config/settings.js'
import { DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import { isRequestId } from '../src/inbound/request-id.js'
import type { QueueSamplerOptions } from '../src/queue/queue-sampler.js'
import { deferredChildLogger } from './request-logger.js'
import type { Tracing } from './tracing.js'
import type { JournalQueue } from '../src/journal/journal-options.js'

/** A request id a load balancer or the sender already set is kept, so one id follows the request across hops. */
export const REQUEST_ID_HEADER = 'x-request-id'
/** The log field, named as on the job data and the worker's lines, so one field follows the request. */
export const REQUEST_ID_LOG_LABEL = 'requestId'

/**
 * The request's id: the incoming `x-request-id` when it is a plain short id (src/inbound/request-id.ts), else a
 * UUID, unique across replicas (it is stored on the job). Fastify's requestIdHeader would keep any value.
 */
export function requestIdOf (request: IncomingMessage): string {
  const sent = request.headers[REQUEST_ID_HEADER]
  return isRequestId(sent) ? sent : randomUUID()
}

/**
 * How often Node looks for requests past their timeout (its default is 30 s, which would let a 1 s timeout
 * run for 31 s): a tenth of the timeout, between 100 ms and 30 s.
 */
export function checkingIntervalFor (requestTimeoutMs: number): number {
  return Math.min(30_000, Math.max(100, Math.floor(requestTimeoutMs / 10)))
}

/**
 * Fastify with the process's pino logger; request log lines carry `requestId`. A request (headers and body)
 * not complete within `requestTimeoutMs` gets 408 and its connection is closed: Fastify's `requestTimeout`
 * alone is not enough, because Node keeps its 60 s headers timeout and uses the larger of the two.
 */
export function createApp (log: Logger, requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS, trustProxy: boolean | number | string = false): FastifyInstance {
  // Typed as Fastify's base logger so the app's type matches the plugins' (a pino Logger is one).
  return Fastify({
    // A hop count as proxy-addr reads one: the nearest `trustProxy` addresses are proxies.
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: checkingIntervalFor(requestTimeoutMs)
    },
    loggerInstance: log as FastifyBaseLogger,
    requestIdHeader: false,
    genReqId: requestIdOf,
    logController: new LogController({ requestIdLogLabel: REQUEST_ID_LOG_LABEL }),
    childLoggerFactory: deferredChildLogger
  })
}

/** W3C trace context and baggage headers, which an untrusted sender could set. */
export const SENDER_TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'] as const

/**
 * A Fastify app with the ingress, health and metrics plugins, not yet listening. onClose closes the queue.
 * With tracing, its plugin comes first, so it sees every route and hook registered after it.
 */
export async function buildServer (
  config: CommonConfig & IngressConfig & RetentionConfig & { allowShortSecrets?: boolean, databaseUrl?: string, dbSchema?: string, journalQueue?: JournalQueue }, log: Logger,
  tracing?: Pick<Tracing, 'fastifyPlugin' | 'telemetry'>
): Promise<FastifyInstance> {
  const app = createApp(log, config.requestTimeoutMs, config.trustProxy)
  if (tracing !== undefined) {
    // A webhook sender is not trusted with our traces: its traceparent would choose the trace id and could turn
    // sampling off (for a whole micro-batch of adds), and its baggage would ride each job into the handler.
    // Removed before the tracing plugin's own hook reads them: every webhook starts a trace of its own.
    app.addHook('onRequest', (request, _reply, done) => {
      for (const name of SENDER_TRACE_HEADERS) delete request.headers[name]
      done()
    })
    await app.register(tracing.fastifyPlugin)
  }
  await app.register(anvil, {
    redis: config.redisUrl ?? DEFAULT_REDIS_URL,
    // A sources file replaces the single WEBHOOK_SECRET source (cli/config/load-config.ts refuses both at once).
    ...(config.sources === undefined
      ? { secret: config.secret, path: config.path, idempotency: config.idempotency }
      : { sources: config.sources }),
    queueName: config.queueName,
    prefix: config.prefix,
    bodyLimit: config.bodyLimit,
    maxInFlightBytes: config.maxInFlightBytes,
    dedupeWindowMs: config.dedupeWindowMs,
    retrySchedule: config.retrySchedule,
    retention: config.retention,
    allowShortSecrets: config.allowShortSecrets,
    telemetry: tracing?.telemetry,
    // ANVIL_JOURNAL_QUEUE=postgres: events go into the journal's queue, not BullMQ.
    ...(config.journalQueue === 'postgres' && config.databaseUrl !== undefined
      ? { journal: { queue: 'postgres' as const, database: config.databaseUrl, schema: config.dbSchema } }
      : {})
  })
  await app.register(anvilHealth)
  return app
}

/** The queue the CLI's gauges sample: the one the command works on. */
export function sampledQueue (config: CommonConfig): QueueSamplerOptions {
  return { redis: config.redisUrl ?? DEFAULT_REDIS_URL, queueName: config.queueName, prefix: config.prefix }
}

/**
 * Metrics as configured: on the app's own port (default), on a port of their own (ANVIL_METRICS_PORT:
 * the returned app, to listen and close), or nowhere (ANVIL_METRICS_PATH=off).
 */
export async function registerMetrics (
  app: FastifyInstance, config: ObservabilityConfig, queue: QueueSamplerOptions, log: Logger
): Promise<FastifyInstance | undefined> {
  if (config.metricsPath === false) return undefined
  if (config.metricsPort === undefined) {
    await app.register(anvilMetrics, { path: config.metricsPath, queue, processMetrics: true })
    return undefined
  }
  const registry = new Registry()
  await app.register(anvilMetrics, { registry, path: false, queue, processMetrics: true })
  // Only the route: the metrics themselves are fed by the plugin on the main app.
  const metricsApp = createApp(log)
  const path = config.metricsPath
  metricsApp.get(path, { logLevel: 'warn' }, async (_request, reply) => await reply.type(registry.contentType).send(await registry.metrics()))
  return metricsApp
}

/** How often a closing server drops keep-alive connections that went idle since it began closing. */
export const IDLE_SWEEP_MS = 100

/**
 * `app.close()` that ends: stops accepting, lets in-flight requests finish, then runs the onClose hooks.
 * Node closes the connections idle at the moment of closing only; a keep-alive connection whose request
 * finishes later would otherwise hold the close open until its keep-alive timeout (72 s in Fastify).
 */
export async function closeGracefully (app: FastifyInstance): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS)
  sweep.unref()
  try {
    await app.close()
  } finally {
    clearInterval(sweep)
  }
}

/** Listens and returns the port actually bound (PORT=0 picks a free one). */
export async function listen (app: FastifyInstance, host: string, port: number): Promise<number> {
  await app.listen({ host, port })
  return (app.server.address() as AddressInfo).port
}
