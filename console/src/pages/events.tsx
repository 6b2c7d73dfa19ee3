import { useState } from 'preact/hooks'
import { query, type Page } from '../api'
import { EventId, Field, Loading, Status, Time, plural } from '../components'
import { CardTable } from '../card-table'
import { href, navigate, type Route } from '../router'
import { useApi } from '../use-api'
import { BulkReplay } from './bulk-replay'

// The server's own declarations: a status or field added there is here too. EVENT_STATUSES is a constant of a
// file with no imports, so the bundle takes only it.
import { EVENT_STATUSES, type EventItem } from '../../../src/event-log/event-item'

export type { EventItem }

/** The journal's filter (GET /admin/events and POST /admin/events/replay take the same fields). */
export const FILTER_FIELDS = ['provider', 'source', 'type', 'status', 'errorClass', 'since', 'until', 'text'] as const
export type Filter = Partial<Record<(typeof FILTER_FIELDS)[number], string>>
const STATUSES = ['', ...EVENT_STATUSES]
const PRESETS = [['Last hour', '1h'], ['24 h', '24h'], ['7 days', '7d']] as const

export function filterOf (params: URLSearchParams): Filter {
  const filter: Filter = {}
  for (const field of FILTER_FIELDS) {
    const value = params.get(field)
    if (value !== null && value !== '') filter[field] = value
  }
  return filter
}

function FilterForm ({ filter }: { filter: Filter }) {
  const [draft, setDraft] = useState<Filter>(filter)
  const set = (field: keyof Filter) => (e: Event) => setDraft({ ...draft, [field]: (e.target as HTMLInputElement).value })
  const input = (field: keyof Filter, label: string) => (
    <Field label={label}><input name={field} value={draft[field] ?? ''} onInput={set(field)} /></Field>
  )
  return (
    <form class='filters' aria-label='Filter events' onSubmit={(e) => { e.preventDefault(); navigate('/events', draft) }}>
      {input('provider', 'Provider')}
      {input('source', 'Source')}
      {input('type', 'Event type')}
      <Field label='Status'>
        <select name='status' value={draft.status ?? ''} onChange={set('status')}>
          {STATUSES.map((s) => <option key={s} value={s}>{s === '' ? 'any' : s}</option>)}
        </select>
      </Field>
      {input('errorClass', 'Error class')}
      {input('since', 'Received since (2h, ISO time)')}
      {input('until', 'Received until')}
      {input('text', 'Payload contains')}
      <div class='presets' role='group' aria-label='Received within'>
        {PRESETS.map(([label, since]) => (
          <button type='button' key={since} aria-pressed={draft.since === since} onClick={() => navigate('/events', { ...draft, since, until: undefined })}>{label}</button>
        ))}
      </div>
      <button type='submit'>Apply filter</button>
      <a href={href('/events')}>Clear</a>
    </form>
  )
}

/** An event is opened by its type, the name a person looks for; an untyped one says so. */
export function EventLink ({ event }: { event: EventItem }) {
  return <a href={href(`/events/${encodeURIComponent(event.id)}`)}>{event.eventType ?? 'untyped event'}</a>
}

export function Events ({ route }: { route: Route }) {
  const filter = filterOf(route.params)
  const cursor = route.params.get('cursor') ?? undefined
  const events = useApi<Page<EventItem>>(`/events${query({ ...filter, cursor })}`)
  return (
    <>
      <h1>Events</h1>
      {/* Keyed by the URL's filter, so a link or the back button resets the form. */}
      <FilterForm key={JSON.stringify(filter)} filter={filter} />
      <Loading loaded={events} feature='journal'>{(page) => (
        <>
          <BulkReplay filter={filter} onDone={events.reload} />
          <CardTable class='events'>
            <caption>{plural(page.items.length, 'event')}{cursor !== undefined ? ' (a later page)' : ''}</caption>
            <thead><tr>
              <th scope='col'>Received</th><th scope='col'>Status</th><th scope='col'>Provider</th><th scope='col'>Source</th>
              <th scope='col'>Type</th><th scope='col'>Provider's event id</th><th scope='col' class='num'>Attempts</th><th scope='col'>Error</th>
            </tr></thead>
            <tbody>{page.items.map((e) => (
              <tr key={e.id}>
                <td data-label='Received'><Time value={e.receivedAt} /></td><td data-label='Status'><Status value={e.status} /></td>
                <td data-label='Provider'>{e.provider ?? '—'}</td><td data-label='Source'>{e.source}</td>
                <td data-label='Type'><EventLink event={e} /></td><td data-label='Event id'><EventId id={e.id} /></td>
                <td data-label='Attempts' class='num'>{e.attempts}</td><td data-label='Error'>{e.errorClass ?? e.lastError ?? ''}</td>
              </tr>
            ))}</tbody>
          </CardTable>
          <nav aria-label='Pages' class='pager'>
            {cursor !== undefined && <a href={href('/events', filter)}>First page</a>}
            {page.next !== null && <a href={href('/events', { ...filter, cursor: page.next })}>Next page</a>}
          </nav>
        </>
      )}</Loading>
    </>
  )
}
