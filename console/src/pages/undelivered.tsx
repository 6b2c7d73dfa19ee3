import { useState } from 'preact/hooks'
import { api, type Page } from '../api'
import { Loading, Time } from '../components'
import { href } from '../router'
import { useApi } from '../use-api'
import { ResendFailed, type MessageResend } from './resend-failed'

interface Undelivered {
  messageId: string, endpointId: string, type: string | null, attempts: number, lastAttemptAt: string,
  lastHttpStatus: number | null, lastError: string | null
}

/** What a re-send of one message did, in words. */
function resent (outcome: MessageResend): string {
  if (outcome.endpointIds.length > 0) return `re-sent to ${outcome.endpointIds.length} ${outcome.endpointIds.length === 1 ? 'endpoint' : 'endpoints'}`
  return outcome.inFlight.length > 0 ? 'still in flight' : 'nothing to re-send'
}

/**
 * Messages with an endpoint that has not had a success for them yet; each endpoint links to its delivery log, to
 * retry from, each message can be re-sent, and every message that ended failed can be re-sent at once.
 */
export function UndeliveredPage () {
  const undelivered = useApi<Page<Undelivered>>('/undelivered?limit=200')
  const [done, setDone] = useState<Record<string, string>>({})
  const resend = (id: string): void => {
    api<MessageResend>('POST', `/messages/${encodeURIComponent(id)}/resend`).then(
      (outcome) => setDone({ ...done, [id]: resent(outcome) }),
      (error: Error) => setDone({ ...done, [id]: error.message })
    )
  }
  return (
    <>
      <h1>Undelivered</h1>
      <ResendFailed onDone={() => undelivered.reload()} />
      <Loading loaded={undelivered} feature='outbound'>{(page) => (
        <table>
          <caption>{page.items.length}{page.next !== null ? '+' : ''} {page.items.length === 1 && page.next === null ? 'message' : 'messages'} not yet delivered</caption>
          <thead><tr>
            <th scope='col'>Message</th><th scope='col'>Endpoint</th><th scope='col'>Type</th><th scope='col'>Attempts</th>
            <th scope='col'>Last attempt</th><th scope='col'>HTTP</th><th scope='col'>Error</th><th scope='col'>Action</th>
          </tr></thead>
          <tbody>{page.items.map((u) => (
            <tr key={`${u.messageId}.${u.endpointId}`}>
              <td>{u.messageId}</td><td><a href={href('/deliveries', { endpoint: u.endpointId })} aria-label={`Deliveries of endpoint ${u.endpointId}`}>{u.endpointId}</a></td><td>{u.type ?? '—'}</td><td>{u.attempts}</td>
              <td><Time value={u.lastAttemptAt} /></td><td>{u.lastHttpStatus ?? '—'}</td><td>{u.lastError ?? ''}</td>
              <td>{done[u.messageId] ?? <button type='button' onClick={() => resend(u.messageId)} aria-label={`Re-send message ${u.messageId}`}>Re-send</button>}</td>
            </tr>
          ))}</tbody>
        </table>
      )}</Loading>
    </>
  )
}
