import { useState } from 'preact/hooks'
import { api } from '../api'
import { Id, Status, Time, plural } from '../components'
import { href } from '../router'
import { useCanWrite } from '../scope'

export interface Delivery {
  id: string, messageId: string, endpointId: string, attempt: number, status: 'started' | 'success' | 'failed',
  httpStatus: number | null, durationMs: number, error?: string, responseHead?: string, createdAt: string
}

/**
 * Deliveries with their answer, each message a link to the message (no such column on the message's own page),
 * each one sent again (a failed one retried) from its row.
 */
export function DeliveryTable ({ items, onRetried, ofMessage = false }: { items: Delivery[], onRetried: () => void, ofMessage?: boolean }) {
  const canWrite = useCanWrite()
  const [retried, setRetried] = useState<Record<string, string>>({})
  const retry = (id: string): void => {
    api<{ alreadyQueued: boolean }>('POST', `/deliveries/${encodeURIComponent(id)}/retry`).then(
      (answer) => { setRetried({ ...retried, [id]: answer.alreadyQueued ? 'a retry was already queued' : 'retry queued' }); onRetried() },
      (error: Error) => setRetried({ ...retried, [id]: error.message })
    )
  }
  return (
    <div class='scroll'><table>
      <caption>{plural(items.length, 'delivery', 'deliveries')}</caption>
      <thead><tr>
        <th scope='col'>At</th><th scope='col'>Status</th><th scope='col' class='num'>HTTP</th><th scope='col' class='num'>Attempt</th><th scope='col' class='num'>Duration</th>
        {!ofMessage && <th scope='col'>Message</th>}<th scope='col'>Endpoint</th><th scope='col'>Error or answer</th><th scope='col'>Action</th>
      </tr></thead>
      <tbody>{items.map((d) => (
        <tr key={d.id} data-testid='delivery'>
          <td><Time value={d.createdAt} /></td><td><Status value={d.status} /></td><td class='num'>{d.httpStatus ?? '—'}</td><td class='num'>{d.attempt}</td>
          <td class='num'>{d.durationMs} ms</td>
          {!ofMessage && <td><a href={href(`/messages/${encodeURIComponent(d.messageId)}`)}><Id value={d.messageId} /></a></td>}
          <td><a href={href('/deliveries', { endpoint: d.endpointId })} aria-label={`Deliveries of endpoint ${d.endpointId}`}><Id value={d.endpointId} /></a></td>
          <td>{d.error ?? ''}{d.responseHead !== undefined && d.responseHead !== '' && <code class='raw excerpt'>{d.responseHead}</code>}</td>
          <td>{!canWrite ? '—' : retried[d.id] ?? <button type='button' onClick={() => retry(d.id)} aria-label={`${d.status === 'failed' ? 'Retry' : 'Send again'}: delivery ${d.id}`}>{d.status === 'failed' ? 'Retry' : 'Send again'}</button>}</td>
        </tr>
      ))}</tbody>
    </table></div>
  )
}
