import { useState } from 'preact/hooks'
import { query, type Page } from '../api'
import { Field, Loading } from '../components'
import { href, navigate, type Route } from '../router'
import { useApi } from '../use-api'
import { DeliveryTable, type Delivery } from './delivery-table'

const FIELDS = ['endpoint', 'status', 'since'] as const

/** The delivery log, filtered by endpoint, status and time; a delivery can be sent again (a failed one retried). */
export function Deliveries ({ route }: { route: Route }) {
  const filter = Object.fromEntries(FIELDS.map((f) => [f, route.params.get(f) ?? undefined])) as Record<(typeof FIELDS)[number], string | undefined>
  const cursor = route.params.get('cursor') ?? undefined
  const deliveries = useApi<Page<Delivery>>(`/deliveries${query({ ...filter, cursor })}`)
  const [draft, setDraft] = useState(filter)
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
          <DeliveryTable items={page.items} onRetried={deliveries.reload} />
          {page.next !== null && <nav aria-label='Pages' class='pager'><a href={href('/deliveries', { ...filter, cursor: page.next })}>Next page</a></nav>}
        </>
      )}</Loading>
    </>
  )
}
