import { useEffect } from 'preact/hooks'
import { Loading } from '../components'
import { useApi } from '../use-api'
import { percent } from './endpoint-types'

interface Stats {
  since: string, until: string, bucketSeconds: number, success: number, failed: number, successRate: number | null, p50Ms: number | null,
  buckets: Array<{ start: string, success: number, failed: number }>
}

const W = 480
const H = 120
const hour = new Intl.DateTimeFormat(undefined, { hour: 'numeric' })

/** Attempts by outcome per bucket, stacked: successes below, failures above. */
function OutcomeChart ({ stats }: { stats: Stats }) {
  const max = Math.max(1, ...stats.buckets.map((b) => b.success + b.failed))
  const width = W / stats.buckets.length
  const y = (n: number): number => (n / max) * (H - 16)
  const first = stats.buckets[0]
  const middle = stats.buckets[Math.floor(stats.buckets.length / 2)]
  return (
    <figure class='chart'>
      <svg viewBox={`0 0 ${W} ${H + 16}`} role='img' aria-label={`Deliveries over the last day: ${stats.success} succeeded, ${stats.failed} failed; at most ${max} in an hour`}>
        <g class='axis'><line class='grid' x1='0' x2={W} y1={H - y(max)} y2={H - y(max)} /><text x='2' y={H - y(max) - 3}>{max}</text><line x1='0' x2={W} y1={H} y2={H} /></g>
        {stats.buckets.map((b, i) => (
          <g key={b.start}>
            <rect class='bar-done' x={i * width + 1} width={width - 2} y={H - y(b.success)} height={y(b.success)} />
            <rect class='bar-failed' x={i * width + 1} width={width - 2} y={H - y(b.success) - y(b.failed)} height={y(b.failed)} />
          </g>
        ))}
        <g class='axis'>
          {first !== undefined && <text x='0' y={H + 13}>{hour.format(new Date(first.start))}</text>}
          {middle !== undefined && <text x={W / 2} y={H + 13} text-anchor='middle'>{hour.format(new Date(middle.start))}</text>}
          <text x={W} y={H + 13} text-anchor='end'>now</text>
        </g>
      </svg>
      <figcaption>
        <ul class='legend'>
          <li><span class='swatch bar-done' />succeeded</li>
          <li><span class='swatch bar-failed' />failed</li>
        </ul>
      </figcaption>
    </figure>
  )
}

/** An endpoint's last day: success rate, p50 latency, and its attempts by outcome over time. */
export function EndpointOverview ({ endpointId, version }: { endpointId: string, version: number }) {
  const stats = useApi<Stats>(`/endpoints/${encodeURIComponent(endpointId)}/stats?hours=24`)
  // A delivery seen on the page counts here too.
  useEffect(() => { if (version > 0) stats.reload() }, [version])
  return (
    <section aria-labelledby='overview-title' class='panel'>
      <h2 id='overview-title'>Last 24 hours</h2>
      <Loading loaded={stats} feature='outbound'>{(s) => (
        <>
          <dl class='kpis'>
            <div><dt>Success rate</dt><dd data-testid='overview-rate'>{percent(s.successRate)}</dd></div>
            <div><dt>Deliveries</dt><dd>{s.success + s.failed}</dd></div>
            <div><dt>Failed</dt><dd>{s.failed}</dd></div>
            <div><dt>p50 latency</dt><dd data-testid='p50'>{s.p50Ms === null ? '—' : `${s.p50Ms} ms`}</dd></div>
          </dl>
          <OutcomeChart stats={s} />
        </>
      )}</Loading>
    </section>
  )
}
