/**
 * Outgoing webhooks' metrics: messages published (src/outbox/outbox-channels.ts); deliveries, from the delivery
 * worker's diagnostics channels (src/delivery/outbound-channels.ts), labelled by endpoint and event type
 * (`instrument` in metrics.ts calls `instrumentOutbound`); and the outbox's pending count, failed count and
 * oldest pending age, read from PostgreSQL on each scrape for every `anvilOutbound` service registered with the
 * registry (`watchOutbound`).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { Gauge, type Registry } from 'prom-client'
import {
  outboundChannels, type CircuitMessage, type DeliveredMessage, type EndpointDisabledMessage
} from '../../src/delivery/outbound-channels.js'
import { outboxChannels, type PublishedMessage } from '../../src/outbox/outbox-channels.js'
import type { OutboxStats } from '../../src/outbox/outbound.js'
import { TalliedCounter, TalliedHistogram, type LabelsOf } from './metric-tally.js'

/** A delivery takes up to its timeout (10 s by default). */
export const DELIVERY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

const endpoint = (m: { endpointId: string }): string => m.endpointId
const byOutcome: LabelsOf<DeliveredMessage, 'endpoint' | 'event_type' | 'outcome'> = {
  names: ['endpoint', 'event_type', 'outcome'], values: [endpoint, (m) => m.eventType, (m) => m.outcome]
}
const byEvent: LabelsOf<DeliveredMessage, 'endpoint' | 'event_type'> = { names: ['endpoint', 'event_type'], values: [endpoint, (m) => m.eventType] }
const byEndpoint: LabelsOf<EndpointDisabledMessage, 'endpoint'> = { names: ['endpoint'], values: [endpoint] }

function createInstruments (registry: Registry) {
  return {
    deliveries: new TalliedCounter(registry, 'anvil_outbound_deliveries_total', 'Delivery attempts, by outcome (success or the error class)', byOutcome),
    duration: new TalliedHistogram(registry, 'anvil_outbound_delivery_duration_seconds', 'Delivery attempt duration', DELIVERY_BUCKETS_SECONDS, byEvent),
    disabled: new TalliedCounter(registry, 'anvil_outbound_endpoint_disabled_total', 'Endpoints disabled (410, or only failures for too long)', byEndpoint),
    circuit: new Gauge({
      name: 'anvil_outbound_circuit_open', help: 'Endpoint circuits this process saw open (1) or closed (0)', labelNames: ['endpoint'], registers: [registry]
    })
  }
}

const instrumentsOf = new WeakMap<Registry, ReturnType<typeof createInstruments>>()

/** Builds the metrics on a registry (once) and subscribes them; returns the unsubscribe. */
export function instrumentOutbound (registry: Registry): () => void {
  const stopPublished = instrumentPublished(registry)
  let metrics = instrumentsOf.get(registry)
  if (metrics !== undefined && registry.getSingleMetric('anvil_outbound_circuit_open') !== metrics.circuit) metrics = undefined
  if (metrics === undefined) {
    metrics = createInstruments(registry)
    instrumentsOf.set(registry, metrics)
  }
  const { deliveries, duration, disabled, circuit } = metrics
  const onDelivered = (m: DeliveredMessage): void => {
    deliveries.inc(m)
    duration.observe(m, m.durationMs / 1000)
  }
  const onDisabled = (m: EndpointDisabledMessage): void => disabled.inc(m)
  const onCircuit = (m: CircuitMessage): void => circuit.set({ endpoint: m.endpointId }, m.open ? 1 : 0)
  const handlers: Array<[string, (message: never) => void]> = [
    [outboundChannels.delivered.name as string, onDelivered],
    [outboundChannels.endpointDisabled.name as string, onDisabled],
    [outboundChannels.circuit.name as string, onCircuit]
  ]
  for (const [name, handler] of handlers) subscribe(name, handler as (message: unknown) => void)
  return () => {
    for (const [name, handler] of handlers) unsubscribe(name, handler as (message: unknown) => void)
    stopPublished()
  }
}

type StatsSource = () => Promise<OutboxStats>

const sourcesOf = new WeakMap<Registry, Set<StatsSource>>()
const publishedOf = new WeakMap<Registry, TalliedCounter<PublishedMessage, 'event_type'>>()

/** Counts published messages on a registry; returns the unsubscribe. */
function instrumentPublished (registry: Registry): () => void {
  let published = publishedOf.get(registry)
  if (published === undefined || registry.getSingleMetric('anvil_outbound_published_total') !== published.counter) {
    published = new TalliedCounter(registry, 'anvil_outbound_published_total', 'Messages written to the outbox', {
      names: ['event_type'] as const,
      values: [(m: PublishedMessage) => m.eventType]
    })
    publishedOf.set(registry, published)
  }
  const counter = published
  const onPublished = (m: PublishedMessage): void => counter.inc(m)
  subscribe(outboxChannels.published.name, onPublished as (message: unknown) => void)
  return () => unsubscribe(outboxChannels.published.name, onPublished as (message: unknown) => void)
}

/** Samples an outbox on each scrape, until the returned function is called. */
export function watchOutbound (registry: Registry, stats: StatsSource): () => void {
  let sources = sourcesOf.get(registry)
  if (sources === undefined) {
    sources = new Set()
    sourcesOf.set(registry, sources)
    addOutboxGauges(registry, sources)
  }
  const current = sources
  current.add(stats)
  return () => { current.delete(stats) }
}

function addOutboxGauges (registry: Registry, sources: ReadonlySet<StatsSource>): void {
  // The three gauges are collected in one scrape: one query per outbox serves them all.
  let pending: Promise<OutboxStats[]> | undefined
  const sampleAll = async (): Promise<OutboxStats[]> => {
    pending ??= Promise.all([...sources].map(async (source) => await source().catch(() => undefined)))
      .then((all) => all.filter((one): one is OutboxStats => one !== undefined))
      .finally(() => { setImmediate(() => { pending = undefined }) })
    return await pending
  }
  const gauge = (name: string, help: string, value: (stats: OutboxStats) => number): void => {
    if (registry.getSingleMetric(name) !== undefined) return
    const registers = [registry]
    new Gauge({
      name,
      help,
      registers,
      async collect () {
        const all = await sampleAll()
        if (all.length > 0) this.set(Math.max(...all.map(value)))
      }
    })
  }
  gauge('anvil_outbox_pending', 'Messages waiting in the outbox to be dispatched', (s) => s.pending)
  gauge('anvil_outbox_failed', 'Messages whose dispatch failed for good', (s) => s.failed)
  gauge('anvil_outbox_oldest_pending_seconds', 'Age of the oldest message waiting in the outbox', (s) => s.oldestPendingSeconds)
}
