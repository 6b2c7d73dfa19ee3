/**
 * Per-request metrics without prom-client's per-call cost. prom-client validates and hashes the labels
 * object on every `inc()` and `observe()`, which on the webhook route (three counters and a histogram per
 * request) was most of the metrics' share of the ingress CPU. Here a request walks a tree of Maps, one
 * level per label, to a number it bumps, building nothing; prom-client sees the counts when it collects,
 * once per label set per scrape.
 */
import { Counter, type Registry } from 'prom-client'

export type Labels<L extends string> = Record<L, string>

/** How a message maps to a label set: the label names, and for each the getter of its value. */
export interface LabelsOf<M, L extends string> {
  names: readonly L[]
  values: ReadonlyArray<(message: M) => string>
}

/** The label sets seen so far, each with its own tally `T`, found without building a key or an object. */
class LabelTree<M, L extends string, T> {
  private root = new Map<string, unknown>()
  /** Every tally, in the order its label set first appeared. */
  leaves: Array<{ labels: Labels<L>, tally: T }> = []

  constructor (private readonly of: LabelsOf<M, L>, private readonly make: () => T) {
    if (of.names.length === 0 || of.names.length !== of.values.length) throw new TypeError('one value getter per label, at least one label')
  }

  find (message: M): T {
    const getters = this.of.values
    const last = getters.length - 1
    let node = this.root
    for (let i = 0; i < last; i++) {
      const value = (getters[i] as (message: M) => string)(message)
      let next = node.get(value) as Map<string, unknown> | undefined
      if (next === undefined) {
        next = new Map()
        node.set(value, next)
      }
      node = next
    }
    const value = (getters[last] as (message: M) => string)(message)
    let tally = node.get(value) as T | undefined
    if (tally === undefined) {
      tally = this.make()
      node.set(value, tally)
      const labels = Object.fromEntries(this.of.names.map((name, i) => [name, (getters[i] as (message: M) => string)(message)]))
      this.leaves.push({ labels: labels as Labels<L>, tally })
    }
    return tally
  }

  clear (): void {
    this.root = new Map()
    this.leaves = []
  }
}

/** A prom-client Counter fed from counts kept between scrapes. */
export class TalliedCounter<M, L extends string> {
  readonly counter: Counter<L>
  private readonly tree: LabelTree<M, L, { count: number }>

  constructor (registry: Registry, name: string, help: string, of: LabelsOf<M, L>) {
    const tree = this.tree = new LabelTree(of, () => ({ count: 0 }))
    this.counter = new Counter({
      name,
      help,
      labelNames: of.names,
      registers: [registry],
      collect () {
        for (const { labels, tally } of tree.leaves) {
          if (tally.count === 0) continue
          this.inc(labels, tally.count)
          tally.count = 0
        }
      }
    })
    // A reset (Registry.resetMetrics) also forgets what was counted since the last scrape.
    const reset = this.counter.reset.bind(this.counter)
    this.counter.reset = () => {
      tree.clear()
      reset()
    }
  }

  /** One more for the message's label set. */
  inc (message: M): void {
    this.tree.find(message).count++
  }
}

interface Buckets { counts: number[], sum: number, count: number }

/** The sample prom-client's metrics return from `get()`. */
interface Sample { labels: Record<string, string | number>, value: number, metricName: string }

/**
 * A Prometheus histogram kept here rather than in prom-client, whose Histogram has no way to add counts in
 * bulk. Registered as a metric on the registry: it answers `get()` in prom-client's shape, so it is scraped,
 * merged and reset like any other.
 */
export class TalliedHistogram<M, L extends string> {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly labelNames: readonly L[]
  private readonly tree: LabelTree<M, L, Buckets>

  constructor (registry: Registry, readonly name: string, readonly help: string, private readonly upperBounds: readonly number[], of: LabelsOf<M, L>) {
    if (upperBounds.some((bound, i) => !Number.isFinite(bound) || (i > 0 && bound <= (upperBounds[i - 1] as number)))) {
      throw new TypeError(`${name}: bucket bounds must be finite and increasing (+Inf is implied)`)
    }
    this.labelNames = of.names
    this.tree = new LabelTree(of, () => ({ counts: new Array<number>(upperBounds.length).fill(0), sum: 0, count: 0 }))
    // prom-client types registerMetric for its own classes; it reads name, help, type, aggregator and get().
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0])
  }

  /** Observes `value` for the message's label set; a value that is not a finite number is left out. */
  observe (message: M, value: number): void {
    // prom-client throws on these; one NaN would make the series' sum NaN for good.
    if (!Number.isFinite(value)) return
    const series = this.tree.find(message)
    series.sum += value
    series.count++
    // Counted in the first bucket that holds it; get() makes them cumulative. Above the last: only in +Inf.
    const bounds = this.upperBounds
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        series.counts[i] = (series.counts[i] as number) + 1
        return
      }
    }
  }

  async get (): Promise<{ name: string, help: string, type: string, values: Sample[], aggregator: string }> {
    const values: Sample[] = []
    for (const { labels, tally: { counts, sum, count } } of this.tree.leaves) {
      let cumulative = 0
      this.upperBounds.forEach((le, i) => {
        cumulative += counts[i] ?? 0
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` })
      })
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${this.name}_bucket` })
      values.push({ labels, value: sum, metricName: `${this.name}_sum` })
      values.push({ labels, value: count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  reset (): void {
    this.tree.clear()
  }
}
