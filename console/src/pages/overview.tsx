import { Loading, Time, Url, text } from '../components'
import type { Page } from '../api'
import type { EventItem as FullEventItem } from '../../../src/event-log/event-item'
import { href } from '../router'
import { useApi } from '../use-api'
import { PerMinuteChart, type MinuteCount } from './per-minute-chart'

interface Count { key: string | null, count: number }
/** `lastHourByReason`: absent from a server older than it. */
interface SignatureFailures { source: string, lastHour: number, lastHourByReason?: Record<string, number>, dayBaselinePerHour: number }
/** The reasons as the table shows them. */
const REASONS: Record<string, string> = { bad_signature: 'wrong', malformed: 'malformed', missing: 'missing', stale: 'stale' }
const byReason = (counts: Record<string, number> | undefined): string =>
  counts === undefined ? '—' : Object.entries(counts).map(([reason, n]) => `${REASONS[reason] ?? reason} ${n}`).join(', ')
interface Stats {
  /** `journal`, or `dead-letters` when there is no database and only the dead letters in Redis are known. */
  source?: string
  windowSeconds: number
  byStatus: Record<string, number>
  byProvider?: Count[]
  deadLetters?: { size: number, oldestAgeSeconds: number | null }
  signatureFailures?: SignatureFailures[]
}
type EventItem = Pick<FullEventItem, 'status' | 'receivedAt'>

const HOUR_MINUTE = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })

/** The last hour's events (at most the newest 500) counted per minute by status. */
function perMinute (items: EventItem[], now = Date.now()): MinuteCount[] {
  const first = Math.floor(now / 60_000) - 59
  const minutes = Array.from({ length: 60 }, (_, i) => ({ minute: HOUR_MINUTE.format(new Date((first + i) * 60_000)), byStatus: {} as Record<string, number> }))
  for (const item of items) {
    const slot = minutes[Math.floor(Date.parse(item.receivedAt) / 60_000) - first]
    if (slot !== undefined) slot.byStatus[item.status] = (slot.byStatus[item.status] ?? 0) + 1
  }
  return minutes
}
interface Endpoint { id: string, url: string, enabled: boolean, disabledReason: string | null, failingSince: string | null }

function age (seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—'
  if (seconds < 120) return `${seconds} s`
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`
  return `${Math.round(seconds / 3600)} h`
}

function StatusCounts ({ title, stats }: { title: string, stats: Stats }) {
  return (
    <table>
      <caption>{title}</caption>
      <thead><tr><th scope='col'>Status</th><th scope='col'>Events</th></tr></thead>
      <tbody>
        {Object.entries(stats.byStatus).map(([status, count]) => (
          <tr key={status}><th scope='row'><a href={href('/events', { status, since: stats.windowSeconds > 3600 ? '24h' : '1h' })}>{status}</a></th><td>{count}</td></tr>
        ))}
      </tbody>
    </table>
  )
}

export function Overview () {
  const hour = useApi<Stats>('/stats?window=1h')
  const day = useApi<Stats>('/stats?window=24h')
  const endpoints = useApi<Page<Endpoint>>('/endpoints?limit=200')
  const undelivered = useApi<Page<unknown>>('/undelivered?limit=200')
  const recent = useApi<Page<EventItem>>('/events?since=1h&limit=500')
  const outbox = useApi<{ pending: number, failed: number, oldestPendingSeconds: number }>('/outbox')
  return (
    <>
      <h1>Overview</h1>
      <section aria-labelledby='inbound-title'>
        <h2 id='inbound-title'>Inbound events</h2>
        <Loading loaded={hour} feature='journal'>{(stats) => (
          <div class='cards'>
            {stats.source === 'dead-letters' && <p class='notice'>No journal (no database): the counts are those of the dead letters in Redis.</p>}
            <StatusCounts title='Last hour' stats={stats} />
            {day.data !== undefined && <StatusCounts title='Last 24 hours' stats={day.data} />}
            <dl class='facts'>
              <dt>Dead letters</dt><dd data-testid='dead-letter-size'>{stats.deadLetters?.size ?? '—'}</dd>
              <dt>Oldest dead letter</dt><dd>{age(stats.deadLetters?.oldestAgeSeconds)}</dd>
            </dl>
            {stats.signatureFailures !== undefined && stats.signatureFailures.length === 0 && <p>No signature failures in the last day.</p>}
            {stats.signatureFailures !== undefined && stats.signatureFailures.length > 0 && (
              <table>
                <caption>Signature failures, last hour against the day's hourly baseline</caption>
                <thead><tr><th scope='col'>Source</th><th scope='col'>Last hour</th><th scope='col'>By reason</th><th scope='col'>Baseline</th></tr></thead>
                <tbody>{stats.signatureFailures.map((row) => (
                  <tr key={row.source}><th scope='row'>{row.source}</th><td>{row.lastHour}</td><td>{byReason(row.lastHourByReason)}</td><td>{text(row.dayBaselinePerHour)}</td></tr>
                ))}</tbody>
              </table>
            )}
            {recent.data !== undefined && <PerMinuteChart minutes={perMinute(recent.data.items)} partial={recent.data.next !== null} />}
          </div>
        )}</Loading>
      </section>
      <section aria-labelledby='outbound-title'>
        <h2 id='outbound-title'>Outgoing webhooks</h2>
        <Loading loaded={endpoints} feature='outbound'>{(page) => {
          const failing = page.items.filter((e) => e.enabled && e.failingSince !== null)
          const disabled = page.items.filter((e) => !e.enabled)
          return (
            <dl class='facts'>
              <dt>Endpoints</dt><dd>{page.items.length}{page.next !== null ? '+' : ''}</dd>
              <dt>Failing</dt><dd>{failing.length}{failing.map((e) => <div key={e.id}><a href={href(`/endpoints/${encodeURIComponent(e.id)}`)}><Url value={e.url} /></a> since <Time value={e.failingSince} /></div>)}</dd>
              <dt>Disabled</dt><dd>{disabled.length}{disabled.map((e) => <div key={e.id}><a href={href(`/endpoints/${encodeURIComponent(e.id)}`)}><Url value={e.url} /></a> ({e.disabledReason ?? 'by an operator'})</div>)}</dd>
              <dt>Outbox backlog</dt><dd data-testid='outbox'>{outbox.data === undefined ? '—' : `${outbox.data.pending} pending (oldest ${age(outbox.data.oldestPendingSeconds)}), ${outbox.data.failed} failed`}</dd>
              <dt>Undelivered</dt><dd><a href={href('/undelivered')}>{undelivered.data === undefined ? '—' : `${undelivered.data.items.length}${undelivered.data.next !== null ? '+' : ''}`}</a></dd>
            </dl>
          )
        }}</Loading>
      </section>
    </>
  )
}
