/** Events per minute by status, as stacked SVG bars (no chart library: a few rectangles). */
export interface MinuteCount { minute: string, byStatus: Record<string, number> }

const ORDER = ['done', 'received', 'processing', 'failed', 'dead']
const WIDTH = 600
const HEIGHT = 120

export function PerMinuteChart ({ minutes, partial = false }: { minutes: MinuteCount[], partial?: boolean }) {
  const totals = minutes.map((m) => Object.values(m.byStatus).reduce((a, b) => a + b, 0))
  const max = Math.max(1, ...totals)
  const bar = WIDTH / Math.max(1, minutes.length)
  const summary = `${totals.reduce((a, b) => a + b, 0)}${partial ? ' (the newest)' : ''} events over ${minutes.length} minutes, at most ${max} in a minute`
  return (
    <figure class='chart'>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role='img' aria-label={`Events per minute by status: ${summary}`}>
        {minutes.map((m, i) => {
          let y = HEIGHT
          return ORDER.filter((status) => (m.byStatus[status] ?? 0) > 0).map((status) => {
            const h = ((m.byStatus[status] ?? 0) / max) * HEIGHT
            y -= h
            return <rect key={`${m.minute}-${status}`} class={`bar-${status}`} x={i * bar} y={y} width={Math.max(1, bar - 1)} height={h}><title>{`${m.minute} ${status}: ${m.byStatus[status] ?? 0}`}</title></rect>
          })
        })}
      </svg>
      <figcaption>Events per minute by status ({ORDER.join(', ')}): {summary}</figcaption>
    </figure>
  )
}
