import { useState } from 'preact/hooks'
import { api, query, type Page } from '../api'
import { EventId, Loading, Time, plural } from '../components'
import { CardTable } from '../card-table'
import { href, type Route } from '../router'
import { useApi } from '../use-api'
import { BulkReplay } from './bulk-replay'
import { EventLink, type EventItem } from './events'

/** The dead letters with their failure context; replay one, or all of them (a bulk replay of status dead). */
export function DeadLetters ({ route }: { route: Route }) {
  const cursor = route.params.get('cursor') ?? undefined
  const letters = useApi<Page<EventItem>>(`/dead-letters${query({ cursor })}`)
  const [results, setResults] = useState<Record<string, string>>({})
  const replay = (id: string): void => {
    api<Record<string, unknown>>('POST', `/events/${encodeURIComponent(id)}/replay`).then(
      () => { setResults({ ...results, [id]: 'replayed' }) },
      (error: Error) => setResults({ ...results, [id]: error.message })
    )
  }
  return (
    <>
      <h1>Dead letters</h1>
      <Loading loaded={letters} feature='journal'>{(page) => (
        <>
          {page.items.length > 0 && <BulkReplay filter={{ status: 'dead' }} onDone={letters.reload} />}
          <CardTable>
            <caption>{plural(page.items.length, 'dead letter')}{cursor !== undefined ? ' (a later page)' : ''}</caption>
            <thead><tr>
              <th scope='col'>Received</th><th scope='col'>Source</th><th scope='col'>Type</th><th scope='col'>Provider's event id</th>
              <th scope='col' class='num'>Attempts</th><th scope='col'>Failure</th><th scope='col'>Action</th>
            </tr></thead>
            <tbody>{page.items.map((e) => (
              <tr key={e.id}>
                <td data-label='Received'><Time value={e.receivedAt} /></td><td data-label='Source'>{e.source}</td>
                <td data-label='Type'><EventLink event={e} /></td><td data-label='Event id'><EventId id={e.id} /></td>
                <td data-label='Attempts' class='num'>{e.attempts}</td><td data-label='Failure'>{e.errorClass !== undefined ? `${e.errorClass}: ` : ''}{e.lastError ?? ''}</td>
                <td data-label='Action'>{results[e.id] ?? <button type='button' onClick={() => replay(e.id)} aria-label={`Replay ${e.eventType ?? 'event'} ${e.id}`}>Replay</button>}</td>
              </tr>
            ))}</tbody>
          </CardTable>
          {page.next !== null && <nav aria-label='Pages' class='pager'><a href={href('/dead-letters', { cursor: page.next })}>Next page</a></nav>}
        </>
      )}</Loading>
    </>
  )
}
