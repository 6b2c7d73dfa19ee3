/**
 * The outbox's metrics: messages published (from src/outbox/outbox-channels.ts), and the pending count,
 * failed count and oldest pending age, read from PostgreSQL on each scrape for every `anvilOutbound` service
 * registered with the registry.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { Gauge, type Registry } from 'prom-client'
import { outboxChannels, type PublishedMessage } from '../../src/outbox/outbox-channels.js'
import type { OutboxStats } from '../../src/outbox/outbound.js'
import { TalliedCounter } from './metric-tally.js'

type StatsSource = () => Promise<OutboxStats>

const sourcesOf = new WeakMap<Registry, Set<StatsSource>>()
const publishedOf = new WeakMap<Registry, TalliedCounter<PublishedMessage, 'event_type'>>()

/** Counts published messages on a registry; returns the unsubscribe. */
export function instrumentOutbox (registry: Registry): () => void {
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
export function watchOutbox (registry: Registry, stats: StatsSource): () => void {
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
