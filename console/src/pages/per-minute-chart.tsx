import { EVENT_STATUSES } from '../../../src/event-log/event-item'

/** Events per minute by status, as stacked SVG bars with both axes and a legend (no chart library: a few rectangles). */
export interface MinuteCount { minute: string, byStatus: Record<string, number> }

/** Stacking order: done at the bottom, then the rest as the server lists them. */
const ORDER = ['done', ...EVENT_STATUSES.filter((status) => status !== 'done')]
const WIDTH = 640
const HEIGHT = 180
/** Room for the count axis on the left and the time axis below. */
const LEFT = 44
const BOTTOM = 36
const TOP = 8
const PLOT_W = WIDTH - LEFT - 8
const PLOT_H = HEIGHT - TOP - BOTTOM
/** A time label every this many minutes. */
const LABEL_EVERY = 10

/** Round tick values for the count axis: 0, then up to four steps of 1, 2 or 5 × 10ⁿ reaching the max. */
function ticks (max: number): number[] {
  const raw = max / 4
  const power = 10 ** Math.floor(Math.log10(Math.max(1, raw)))
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? power * 10
  return Array.from({ length: Math.ceil(max / step) + 1 }, (_, i) => i * step)
}

export function PerMinuteChart ({ minutes, partial = false }: { minutes: MinuteCount[], partial?: boolean }) {
  const totals = minutes.map((m) => Object.values(m.byStatus).reduce((a, b) => a + b, 0))
  const peak = Math.max(1, ...totals)
  const scale = ticks(peak)
  const top = scale.at(-1) ?? peak
  const y = (count: number): number => TOP + PLOT_H - (count / top) * PLOT_H
  const bar = PLOT_W / Math.max(1, minutes.length)
  const summary = `${totals.reduce((a, b) => a + b, 0)}${partial ? ' (the newest)' : ''} events over ${minutes.length} minutes, at most ${peak} in a minute`
  return (
    <figure class='chart'>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role='img' aria-label={`Events per minute by status: ${summary}`}>
        <g class='axis' data-testid='count-axis'>
          {scale.map((n) => (
            <g key={n}>
              <line class='grid' x1={LEFT} x2={LEFT + PLOT_W} y1={y(n)} y2={y(n)} />
              <text x={LEFT - 6} y={y(n) + 4} text-anchor='end'>{n}</text>
            </g>
          ))}
          <text x={12} y={TOP + PLOT_H / 2} text-anchor='middle' transform={`rotate(-90 12 ${TOP + PLOT_H / 2})`}>events</text>
        </g>
        <g class='axis' data-testid='time-axis'>
          <line x1={LEFT} x2={LEFT + PLOT_W} y1={TOP + PLOT_H} y2={TOP + PLOT_H} />
          {minutes.map((m, i) => {
            const last = i === minutes.length - 1
            // The newest minute's label ends at the plot's edge, so it is never cut off.
            return (i % LABEL_EVERY === 0 || last) && (
              <text key={m.minute} x={last ? LEFT + PLOT_W : LEFT + i * bar + bar / 2} y={TOP + PLOT_H + 16} text-anchor={last ? 'end' : 'middle'}>{m.minute}</text>
            )
          })}
          <text x={LEFT + PLOT_W / 2} y={HEIGHT - 2} text-anchor='middle'>minute (local time)</text>
        </g>
        {minutes.map((m, i) => {
          let base = 0
          return ORDER.filter((status) => (m.byStatus[status] ?? 0) > 0).map((status) => {
            const count = m.byStatus[status] ?? 0
            const rect = <rect key={`${m.minute}-${status}`} class={`bar-${status}`} x={LEFT + i * bar} y={y(base + count)} width={Math.max(1, bar - 1)} height={y(base) - y(base + count)}><title>{`${m.minute} ${status}: ${count}`}</title></rect>
            base += count
            return rect
          })
        })}
      </svg>
      <figcaption>
        <ul class='legend' aria-label='Legend'>
          {ORDER.map((status) => <li key={status}><span class={`swatch bar-${status}`} aria-hidden='true' />{status}</li>)}
        </ul>
        Events per minute by status: {summary}
      </figcaption>
    </figure>
  )
}
