/**
 * The tallied metrics expose exactly what prom-client's own Counter and Histogram would have for the same
 * observations: same text, same JSON, same reset. prom-client is the reference implementation here.
 */
import t from 'tap'
import { Counter, Histogram, Registry } from 'prom-client'
import { TalliedCounter, TalliedHistogram, type LabelsOf } from '../../plugins/metrics/metric-tally.js'

interface Message { source: string, kind?: string }
const LABELS = ['source', 'kind'] as const
const of: LabelsOf<Message, (typeof LABELS)[number]> = { names: LABELS, values: [(m) => m.source, (m) => m.kind ?? 'unknown'] }
const labelsOf = (m: Message): Record<string, string> => ({ source: m.source, kind: m.kind ?? 'unknown' })
const BOUNDS = [0.001, 0.01, 0.1, 1]
const messages: Array<[Message, number]> = [
  [{ source: 'a', kind: 'x' }, 0.0005],
  [{ source: 'a', kind: 'x' }, 0.001], // on a bound: counted in that bucket (le is "less or equal")
  [{ source: 'a', kind: 'x' }, 0.05],
  [{ source: 'a' }, 7], // above every bound: only in +Inf
  [{ source: 'b', kind: 'x\u0000y' }, 0.2],
  [{ source: 'a', kind: 'x' }, 0.5]
]

t.test('a tallied counter scrapes as the prom-client Counter fed the same events, and keeps counting across scrapes', async (t) => {
  const reference = new Registry()
  const tallied = new Registry()
  const counter = new Counter({ name: 'c_total', help: 'h', labelNames: LABELS, registers: [reference] })
  const tally = new TalliedCounter(tallied, 'c_total', 'h', of)
  for (const [m] of messages) {
    counter.inc(labelsOf(m))
    tally.inc(m)
  }
  t.equal(await tallied.metrics(), await reference.metrics())
  // Counts after a scrape add to what was handed over, not replace it.
  counter.inc({ source: 'a', kind: 'x' }, 1)
  tally.inc({ source: 'a', kind: 'x' })
  t.equal(await tallied.metrics(), await reference.metrics(), 'a second scrape')
  t.same(await tallied.getMetricsAsJSON(), await reference.getMetricsAsJSON(), 'JSON as well')
  tallied.resetMetrics()
  t.equal(await tallied.getSingleMetricAsString('c_total'), '# HELP c_total h\n# TYPE c_total counter', 'reset empties it')
  // Counted, not yet scraped, then reset: those counts are gone too.
  tally.inc({ source: 'a', kind: 'x' })
  tallied.resetMetrics()
  t.equal(await tallied.getSingleMetricAsString('c_total'), '# HELP c_total h\n# TYPE c_total counter', 'reset forgets unscraped counts')
})

t.test('a tallied histogram scrapes as the prom-client Histogram fed the same observations', async (t) => {
  const reference = new Registry()
  const tallied = new Registry()
  const histogram = new Histogram({ name: 'h_seconds', help: 'h', labelNames: LABELS, buckets: BOUNDS, registers: [reference] })
  const tally = new TalliedHistogram(tallied, 'h_seconds', 'h', BOUNDS, of)
  for (const [m, value] of messages) {
    histogram.observe(labelsOf(m), value)
    tally.observe(m, value)
  }
  t.equal(await tallied.metrics(), await reference.metrics())
  // prom-client adds an `exemplar` slot to each of its samples; exemplars are off, so it is always empty.
  const withoutExemplars = (metrics: Array<{ values: Array<Record<string, unknown>> }>): unknown =>
    metrics.map((metric) => ({ ...metric, values: metric.values.map(({ exemplar, ...value }) => value) }))
  t.same(withoutExemplars(await tallied.getMetricsAsJSON() as never), withoutExemplars(await reference.getMetricsAsJSON() as never), 'JSON as well')
  t.equal(tallied.getSingleMetric('h_seconds'), tally as unknown, 'found by name, like any metric')
  t.throws(() => new TalliedHistogram(tallied, 'h_seconds', 'h', BOUNDS, of), /already been registered/, 'one per name')
  tallied.resetMetrics()
  histogram.reset()
  t.equal(await tallied.metrics(), await reference.metrics(), 'reset empties it')
  // prom-client refuses these; here they are left out, so one bad value cannot make a sum NaN for good.
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) tally.observe({ source: 'a', kind: 'x' }, bad)
  tally.observe({ source: 'a', kind: 'x' }, 0.5)
  histogram.observe(labelsOf({ source: 'a', kind: 'x' }), 0.5)
  t.equal(await tallied.metrics(), await reference.metrics(), 'NaN and Infinity are left out')
  t.throws(() => new TalliedHistogram(new Registry(), 'x_seconds', 'h', [1, 0.5], of), /increasing/)
})
