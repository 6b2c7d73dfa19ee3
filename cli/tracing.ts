/**
 * OpenTelemetry for the CLI (`ANVIL_TRACING=otlp`). Every OpenTelemetry package is imported here, dynamically
 * and only when tracing is on: they are optionalDependencies, and the default path never loads them.
 * Spans go over OTLP/HTTP with JSON bodies to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else
 * OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces (default http://localhost:4318); the SDK reads those itself.
 */
import { createRequire } from 'node:module'
import type { FastifyPluginCallback } from 'fastify'
import type { Logger } from 'pino'
import { DEFAULT_HEALTH_PREFIX } from '../plugins/health.js'
import type { ObservabilityConfig } from './config/load-config.js'
import type { Telemetry } from '../src/queue/telemetry.js'
import type { Lifecycle } from './lifecycle.js'
import { throttleRepeats } from './logging.js'

/** How long shutdown waits for the last spans to be sent: an unreachable collector must not hold it up. */
export const FLUSH_TIMEOUT_MS = 2000

/** What `npm install` needs for tracing (the optionalDependencies of package.json). */
export const TRACING_PACKAGES = [
  '@opentelemetry/api', '@opentelemetry/sdk-trace-node', '@opentelemetry/resources',
  '@opentelemetry/exporter-trace-otlp-http', '@fastify/otel', 'bullmq-otel'
] as const

export interface TracingOptions {
  /** `service.name` unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) sets one. */
  serviceName: string
  /** Routes that get no spans (health probes, metrics scrapes): exact paths or path prefixes. */
  ignorePaths?: string[]
}

export interface Tracing {
  /** Registered on the server app before any other plugin: a SERVER span per request, and hook spans. */
  fastifyPlugin: FastifyPluginCallback
  /** BullMQ's `telemetry` option: the ingress's Queue and the Worker. */
  telemetry: Telemetry
  /** Sends what is buffered and stops; never waits longer than FLUSH_TIMEOUT_MS. */
  shutdown: () => Promise<void>
}

// The return type is inferred: spelled out, it would be six `typeof import(...)` of packages that may be absent.
async function loadPackages () {
  try {
    return await Promise.all([
      import('@opentelemetry/api'), import('@opentelemetry/sdk-trace-node'), import('@opentelemetry/resources'),
      import('@opentelemetry/exporter-trace-otlp-http'), import('@fastify/otel'), import('bullmq-otel')
    ])
  } catch (err) {
    const code = (err as { code?: unknown }).code
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw err
    const missing = /'((?:@[^/']+\/)?[^/']+)/.exec((err as Error).message)?.[1] ?? 'a package'
    throw new Error(`ANVIL_TRACING=otlp needs the optional OpenTelemetry packages, and ${missing} is not installed: ` +
      `npm install ${TRACING_PACKAGES.join(' ')}`)
  }
}

/** OpenTelemetry's error handler passes an exception as JSON, stack and all: its message is the line. */
function messageOf (text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown }
    if (typeof parsed?.message === 'string') return parsed.message
  } catch {}
  return text
}

function ignored (paths: string[]): (route: { url: string }) => boolean {
  return ({ url }) => paths.some((path) => url === path || url.startsWith(path + '/') || url.startsWith(path + '?'))
}

/** Sets up the global tracer provider (W3C trace context, async-local context) and the exporter. */
export async function startTracing (options: TracingOptions, log: Logger): Promise<Tracing> {
  const [api, sdk, resources, otlp, fastifyOtel, bullmqOtel] = await loadPackages()
  const { version } = createRequire(import.meta.url)('../../package.json') as { version: string }
  // Export failures are reported through OpenTelemetry's diag logger, which is silent unless given one.
  const warn = throttleRepeats(log)
  const report = (message: string): void => warn.warn({ err: messageOf(message) }, 'anvil: tracing')
  api.diag.setLogger({ error: report, warn: report, info () {}, debug () {}, verbose () {} }, api.DiagLogLevel.WARN)

  const resource = resources.defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': version }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
  const provider = new sdk.NodeTracerProvider({
    resource,
    spanProcessors: [new sdk.BatchSpanProcessor(new otlp.OTLPTraceExporter())]
  })
  provider.register()

  const instrumentation = new fastifyOtel.FastifyOtelInstrumentation({
    ignorePaths: ignored([DEFAULT_HEALTH_PREFIX, ...options.ignorePaths ?? []])
  })
  const telemetry = new bullmqOtel.BullMQOtel({ tracerName: 'anvil', version })
  log.info({ serviceName: options.serviceName }, 'anvil: tracing on (OTLP/HTTP)')

  return {
    fastifyPlugin: instrumentation.plugin(),
    telemetry,
    async shutdown () {
      let timer: NodeJS.Timeout | undefined
      const expired = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), FLUSH_TIMEOUT_MS) })
      const flushed = provider.shutdown().then(() => true, (err: Error) => {
        log.warn({ err: err.message }, 'anvil: tracing shutdown failed')
        return true
      })
      if (!await Promise.race([flushed, expired])) {
        log.warn({ timeoutMs: FLUSH_TIMEOUT_MS }, 'anvil: tracing flush timed out; unsent spans dropped')
      }
      clearTimeout(timer)
    }
  }
}

/**
 * Tracing as configured: undefined when off (nothing imported), else started and added to the lifecycle
 * first, so it is closed last and flushes the spans of everything closed before it.
 */
export async function setUpTracing (config: ObservabilityConfig, serviceName: string, log: Logger, life: Lifecycle): Promise<Tracing | undefined> {
  if (config.tracing === 'off') return undefined
  const ignorePaths = config.metricsPath === false ? [] : [config.metricsPath]
  const tracing = await startTracing({ serviceName, ignorePaths }, log)
  life.add('tracing', tracing.shutdown)
  return tracing
}
