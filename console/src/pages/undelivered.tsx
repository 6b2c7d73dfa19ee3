import type { Page } from '../api'
import { Loading, Time } from '../components'
import { href } from '../router'
import { useApi } from '../use-api'

interface Undelivered {
  messageId: string, endpointId: string, type: string | null, attempts: number, lastAttemptAt: string,
  lastHttpStatus: number | null, lastError: string | null
}

/** Messages with an endpoint that has not had a success for them yet; each endpoint links to its delivery log, to retry from. */
export function UndeliveredPage () {
  const undelivered = useApi<Page<Undelivered>>('/undelivered?limit=200')
  return (
    <>
      <h1>Undelivered</h1>
      <Loading loaded={undelivered} feature='outbound'>{(page) => (
        <table>
          <caption>{page.items.length}{page.next !== null ? '+' : ''} {page.items.length === 1 && page.next === null ? 'message' : 'messages'} not yet delivered</caption>
          <thead><tr>
            <th scope='col'>Message</th><th scope='col'>Endpoint</th><th scope='col'>Type</th><th scope='col'>Attempts</th>
            <th scope='col'>Last attempt</th><th scope='col'>HTTP</th><th scope='col'>Error</th>
          </tr></thead>
          <tbody>{page.items.map((u) => (
            <tr key={`${u.messageId}.${u.endpointId}`}>
              <td>{u.messageId}</td><td><a href={href('/deliveries', { endpoint: u.endpointId })} aria-label={`Deliveries of endpoint ${u.endpointId}`}>{u.endpointId}</a></td><td>{u.type ?? '—'}</td><td>{u.attempts}</td>
              <td><Time value={u.lastAttemptAt} /></td><td>{u.lastHttpStatus ?? '—'}</td><td>{u.lastError ?? ''}</td>
            </tr>
          ))}</tbody>
        </table>
      )}</Loading>
    </>
  )
}
