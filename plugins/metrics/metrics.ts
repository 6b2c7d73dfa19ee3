/**
 * Prometheus metrics (prom-client) from Anvil's diagnostics channels. Register it next to `anvil` and/or
 * `anvilWorker`; it serves `GET /metrics` unless it was given the host's registry (then the host's own
 * endpoint shows Anvil's metrics) or `path: false`.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client'
import { channels, type EnqueuedMessage, type EventLabels, type ProcessedMessage, type RejectedMessage, type RespondedMessage } from '../../src/shared/diagnostics.js'
import { errors } from '../../src/shared/errors.js'
import { DEFAULT_METRICS_PATH } from '../../src/shared/constants.js'
import { createQueueSampler, SAMPLED_STATES, type QueueSample, type QueueSampler, QueueSamplerOptionsSchema } from '../../src/queue/queue-sampler.js'
import { compileCheck, throwInvalid } from '../../src/shared/validate.js'
import { clockSkewSeconds } from '../../src/redis/clock-skew.js'
import { TalliedCounter, TalliedHistogram, type LabelsOf } from './metric-tally.js'
import { instrumentOutbound, watchOutbound } from './outbound-metrics.js'
import { Type, type Static } from '@sinclair/typebox'
import { Opaque } from '../../src/shared/schemas.js'

/** Ingress answers are fast (ms); received → handled spans retries, so it reaches hours. */
export const INGRESS_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
export const HANDLED_BUCKETS_SECONDS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 21600]

export const AnvilMetricsOptionsSchema = Type.Object({
  /** The host's prom-client registry: Anvil's metrics join it and no route is added unless `path` is given. @defaultValue a registry of Anvil's own */
  registry: Type.Optional(Opaque<Registry>()),
  /** The route; `false` for none. @defaultValue `'/metrics'` (none when `registry` is given) */
  path: Type.Optional(Type.Union([Type.Literal(false), Type.String({ pattern: '^/\\S*$' })])),
  /**
   * Where the queue gauges read from; `false`: no queue gauges. @defaultValue the queue of the `anvil` plugin
   * registered on this app (same Redis, queue and prefix)
   */
  queue: Type.Optional(Type.Union([Type.Literal(false), QueueSamplerOptionsSchema])),
  /** Node process metrics (prom-client defaults, prefixed `anvil_`). @defaultValue true on Anvil's own registry, false on the host's */
  processMetrics: Type.Optional(Type.Boolean())
}, { additionalProperties: false })

export type AnvilMetricsOptions = Static<typeof AnvilMetricsOptionsSchema>

const checkOptions = compileCheck(AnvilMetricsOptionsSchema)

declare module 'fastify' {
  interface FastifyInstance {
    anvilMetrics: { registry: Registry }
  }
}

const EVENT = ['source', 'provider', 'event_type'] as const
const ROUTE = ['source', 'provider'] as const
type EventLabel = (typeof EVENT)[number]
type RouteLabel = (typeof ROUTE)[number]

/** One metric per name per registry: a second registration (two apps, one host registry) reuses it. */
function reuse<M extends Metric> (registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make()
}

/** Label values; a message without a provider or event type counts under `unknown`. */
const source = (m: EventLabels): string => m.source
const provider = (m: EventLabels): string => m.provider ?? 'unknown'
const eventType = (m: EventLabels): string => m.eventType ?? 'unknown'
const byRoute: LabelsOf<EventLabels, RouteLabel> = { names: ROUTE, values: [source, provider] }
const byEvent: LabelsOf<EventLabels, EventLabel> = { names: EVENT, values: [source, provider, eventType] }
const byReason: LabelsOf<RejectedMessage, RouteLabel | 'reason'> = { names: [...ROUTE, 'reason'], values: [source, provider, (m) => m.reason] }
const byStatus: LabelsOf<RespondedMessage, RouteLabel | 'status_code'> = {
  names: [...ROUTE, 'status_code'], values: [source, provider, (m) => String(m.statusCode)]
}

/**
 * The channels are process-wide: a registry is subscribed once however many apps register it (else it
 * would count each event once per app). Reference-counted, so the last app to close unsubscribes. The
 * queue gauges sample every queue registered on the registry.
 */
interface RegistryState { apps: number, stop: () => void, samplers: Set<QueueSampler> }
const subscribed = new WeakMap<Registry, RegistryState>()

function instrumentShared (registry: Registry, sampler?: QueueSampler): () => void {
  let state = subscribed.get(registry)
  if (state === undefined) {
    const samplers = new Set<QueueSampler>()
    state = { apps: 0, stop: instrument(registry), samplers }
    // The gauges read the samplers of the registry's current state: a gauge kept on a host registry from an
    // earlier app (closed since) samples the queues of the apps registered now.
    addQueueGauges(registry, () => subscribed.get(registry)?.samplers ?? new Set())
    subscribed.set(registry, state)
  }
  state.apps++
  if (sampler !== undefined) state.samplers.add(sampler)
  const current = state
  return () => {
    if (sampler !== undefined) current.samplers.delete(sampler)
    if (--current.apps > 0) return
    current.stop()
    subscribed.delete(registry)
  }
}

type Instruments = ReturnType<typeof createInstruments>

/** The tallied metrics of a registry, kept with it: a registry instrumented again counts on in the same ones. */
const instrumentsOf = new WeakMap<Registry, Instruments>()

function createInstruments (registry: Registry) {
  const counter = <M, L extends string>(name: string, help: string, of: LabelsOf<M, L>): TalliedCounter<M, L> =>
    new TalliedCounter(registry, name, help, of)
  return {
    received: counter('anvil_webhooks_received_total', 'Webhook requests received', byRoute),
    // By the signed event type (unknown where the preset reads none, or for a batch): never a type read before verifying.
    verified: counter('anvil_webhooks_verified_total', 'Webhook requests whose signature verified', byEvent),
    eventReceived: counter('anvil_events_received_total', 'Verified webhook events taken in (each of a batch), before enqueueing', byEvent),
    rejected: counter('anvil_webhooks_rejected_total', 'Webhook requests refused, by reason', byReason),
    enqueued: counter('anvil_events_enqueued_total', 'Events that made a new job', byEvent),
    duplicate: counter('anvil_events_duplicate_total', 'Events already seen within the dedupe window', byEvent),
    processed: counter('anvil_jobs_processed_total', 'Jobs the handler completed', byEvent),
    failed: counter('anvil_job_attempts_failed_total', 'Handler attempts that failed (each retry counts)', byEvent),
    deadLettered: counter('anvil_jobs_dead_lettered_total', 'Jobs moved to the dead-letter queue', byEvent),
    replayed: counter('anvil_dead_letters_replayed_total', 'Dead letters replayed onto the queue', byEvent),
    ingressSeconds: new TalliedHistogram(registry, 'anvil_ingress_duration_seconds', 'Webhook route latency, by status code',
      INGRESS_BUCKETS_SECONDS, byStatus),
    handledSeconds: new TalliedHistogram(registry, 'anvil_received_to_handled_seconds',
      'From the request arriving to the handler completing (retries included)', HANDLED_BUCKETS_SECONDS, byEvent)
  }
}

/** Builds the metrics on a registry and subscribes them to the channels; returns the unsubscribe. */
export function instrument (registry: Registry): () => void {
  let metrics = instrumentsOf.get(registry)
  // Kept ones are used again only while still on the registry: a host's registry.clear() removes them.
  if (metrics !== undefined && registry.getSingleMetric('anvil_webhooks_received_total') !== metrics.received.counter) metrics = undefined
  if (metrics === undefined) {
    metrics = createInstruments(registry)
    instrumentsOf.set(registry, metrics)
  }
  const { received, verified, eventReceived, rejected, enqueued, duplicate, processed, failed, deadLettered, replayed, ingressSeconds, handledSeconds } = metrics
  const handlers: Array<[keyof typeof channels, (message: never) => void]> = [
    ['received', (m: EventLabels) => received.inc(m)],
    ['verified', (m: EventLabels) => verified.inc(m)],
    ['eventReceived', (m: EventLabels) => eventReceived.inc(m)],
    ['rejected', (m: RejectedMessage) => rejected.inc(m)],
    ['enqueued', (m: EnqueuedMessage) => (m.duplicate ? duplicate : enqueued).inc(m)],
    ['responded', (m: RespondedMessage) => ingressSeconds.observe(m, m.durationMs / 1000)],
    ['processed', (m: ProcessedMessage) => {
      processed.inc(m)
      handledSeconds.observe(m, m.receivedToHandledMs / 1000)
    }],
    ['failed', (m: EventLabels) => failed.inc(m)],
    ['deadLettered', (m: EventLabels) => deadLettered.inc(m)],
    ['replayed', (m: EventLabels) => replayed.inc(m)]
  ]
  for (const [name, handler] of handlers) subscribe(channels[name].name, handler as (message: unknown) => void)
  const stopOutbound = instrumentOutbound(registry)
  return () => {
    for (const [name, handler] of handlers) unsubscribe(channels[name].name, handler as (message: unknown) => void)
    stopOutbound()
  }
}

/** Queue depth by state and dead-letter size, sampled from BullMQ on each scrape (a failed sample is left out). */
function addQueueGauges (registry: Registry, samplersNow: () => ReadonlySet<QueueSampler>): void {
  const registers = [registry]
  // Both gauges are collected in one scrape: one sample of each queue serves both.
  let pending: Promise<QueueSample[]> | undefined
  const sampleAll = async (): Promise<QueueSample[]> => {
    pending ??= Promise.all([...samplersNow()].map(async (sampler) => await sampler.sample().catch(() => undefined)))
      .then((samples) => samples.filter((one): one is QueueSample => one !== undefined))
      .finally(() => { setImmediate(() => { pending = undefined }) })
    return await pending
  }
  reuse(registry, 'anvil_queue_jobs', () => new Gauge({
    name: 'anvil_queue_jobs', help: 'Jobs in the queue by state (sampled from BullMQ on scrape)', labelNames: ['queue', 'state'], registers,
    async collect () {
      for (const sample of await sampleAll()) {
        for (const state of SAMPLED_STATES) this.set({ queue: sample.queueName, state }, sample.states[state])
      }
    }
  }))
  reuse(registry, 'anvil_dead_letters', () => new Gauge({
    name: 'anvil_dead_letters', help: 'Dead letters waiting (sampled on scrape)', labelNames: ['queue'], registers,
    async collect () {
      for (const sample of await sampleAll()) this.set({ queue: sample.queueName }, sample.deadLetters)
    }
  }))
  reuse(registry, 'anvil_clock_skew_seconds', () => new Gauge({
    name: 'anvil_clock_skew_seconds', help: 'How far this host\'s clock is ahead of Redis\'s (negative: behind), checked at start and every minute', registers,
    collect () {
      const skew = clockSkewSeconds()
      if (skew !== undefined) this.set(skew)
    }
  }))
  reuse(registry, 'anvil_dead_letters_oldest_age_seconds', () => new Gauge({
    name: 'anvil_dead_letters_oldest_age_seconds', help: 'Age of the oldest waiting dead letter, 0 when none (sampled on scrape)', labelNames: ['queue'], registers,
    async collect () {
      for (const sample of await sampleAll()) this.set({ queue: sample.queueName }, sample.oldestDeadLetterAgeSeconds ?? 0)
    }
  }))
}

function samplerFor (app: Parameters<FastifyPluginAsync>[0], option: AnvilMetricsOptions['queue']): QueueSampler | undefined {
  if (option === false) return undefined
  if (option !== undefined) return createQueueSampler(option)
  // `app.anvil` may be the outbound plugin's alone (publish, no ingress).
  if (!app.hasDecorator('anvil') || !('ingress' in app.anvil)) return undefined
  const { redis, settings } = app.anvil.ingress.options
  return createQueueSampler({ redis, queueName: settings.queueName, prefix: settings.prefix })
}

const anvilMetrics: FastifyPluginAsync<AnvilMetricsOptions> = async (app, options) => {
  throwInvalid(checkOptions(options))
  if (options.registry !== undefined && !(options.registry instanceof Registry)) {
    throw new errors.INVALID_OPTIONS('registry must be a prom-client Registry')
  }
  const registry = options.registry ?? new Registry()
  const path = options.path ?? (options.registry === undefined ? DEFAULT_METRICS_PATH : false)
  if (options.processMetrics ?? options.registry === undefined) collectDefaultMetrics({ register: registry, prefix: 'anvil_' })
  const sampler = samplerFor(app, options.queue)
  const stop = instrumentShared(registry, sampler)
  const stopOutbox = app.hasDecorator('anvilOutbound') ? watchOutbound(registry, app.anvilOutbound.outboxStats) : undefined
  app.decorate('anvilMetrics', { registry })
  app.addHook('onClose', async () => {
    stop()
    stopOutbox?.()
    await sampler?.close()
  })
  if (path !== false) {
    app.get(path, { logLevel: 'warn' }, async (_request, reply) => {
      return await reply.type(registry.contentType).send(await registry.metrics())
    })
  }
}

const plugin: FastifyPluginAsync<AnvilMetricsOptions> = fp(anvilMetrics, { name: '@anvil/fastify-metrics', fastify: '5.x' })
export default plugin
