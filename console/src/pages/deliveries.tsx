import { useState } from 'preact/hooks'
import { api, query, type Page } from '../api'
import { Field, Loading, Status, Time } from '../components'
import { href, navigate, type Route } from '../router'
import { useApi } from '../use-api'

interface Delivery {
  id: string, messageId: string, endpointId: string, attempt: number, status: 'started' | 'success' | 'failed',
  httpStatus: number | null, durationMs: number, error?: string, createdAt: string
}
const FIELDS = ['endpoint', 'status', 'since'] as const

/** The delivery log, filtered by endpoint, status and time; a delivery can be sent again (a failed one retried). */
export function Deliveries ({ route }: { route: Route }) {
  const filter = Object.fromEntries(FIELDS.map((f) => [f, route.params.get(f) ?? undefined])) as Record<(typeof FIELDS)[number], string | undefined>
  const cursor = route.params.get('cursor') ?? undefined
  const deliveries = useApi<Page<Delivery>>(`/deliveries${query({ ...filter, cursor })}`)
  const [draft, setDraft] = useState(filter)
  const [retried, setRetried] = useState<Record<string, string>>({})
  const retry = (id: string): void => {
    api('POST', `/deliveries/${encodeURIComponent(id)}/retry`).then(
      () => { setRetried({ ...retried, [id]: 'retry queued' }); deliveries.reload() },
      (error: Error) => setRetried({ ...retried, [id]: error.message })
    )
  }
  return (
    <>
      <h1>Deliveries</h1>
      <form class='filters' aria-label='Filter deliveries' onSubmit={(e) => { e.preventDefault(); navigate('/deliveries', draft) }}>
        <Field label='Endpoint id'><input name='endpoint' value={draft.endpoint ?? ''} onInput={(e) => setDraft({ ...draft, endpoint: (e.target as HTMLInputElement).value })} /></Field>
        <Field label='Status'>
          <select name='status' value={draft.status ?? ''} onChange={(e) => setDraft({ ...draft, status: (e.target as HTMLSelectElement).value })}>
            <option value=''>any</option><option value='success'>success</option><option value='failed'>failed</option><option value='started'>started (outcome unknown)</option>
          </select>
        </Field>
        <Field label='Since (ISO time)'><input name='since' value={draft.since ?? ''} onInput={(e) => setDraft({ ...draft, since: (e.target as HTMLInputElement).value })} /></Field>
        <button type='submit'>Apply filter</button>
      </form>
      <Loading loaded={deliveries} feature='outbound'>{(page) => (
        <>
          <table>
            <caption>{page.items.length} {page.items.length === 1 ? 'delivery' : 'deliveries'}</caption>
            <thead><tr>
              <th scope='col'>At</th><th scope='col'>Status</th><th scope='col'>HTTP</th><th scope='col'>Attempt</th><th scope='col'>Duration</th>
              <th scope='col'>Message</th><th scope='col'>Endpoint</th><th scope='col'>Error</th><th scope='col'>Action</th>
            </tr></thead>
            <tbody>{page.items.map((d) => (
              <tr key={d.id} data-testid='delivery'>
                <td><Time value={d.createdAt} /></td><td><Status value={d.status} /></td><td>{d.httpStatus ?? '—'}</td><td>{d.attempt}</td>
                <td>{d.durationMs} ms</td><td>{d.messageId}</td><td>{d.endpointId}</td><td>{d.error ?? ''}</td>
                <td>{retried[d.id] ?? <button type='button' onClick={() => retry(d.id)} aria-label={`${d.status === 'failed' ? 'Retry' : 'Send again'}: delivery ${d.id}`}>{d.status === 'failed' ? 'Retry' : 'Send again'}</button>}</td>
              </tr>
            ))}</tbody>
          </table>
          {page.next !== null && <nav aria-label='Pages' class='pager'><a href={href('/deliveries', { ...filter, cursor: page.next })}>Next page</a></nav>}
        </>
      )}</Loading>
    </>
  )
}
