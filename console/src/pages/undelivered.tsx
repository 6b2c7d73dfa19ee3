import { useState } from 'preact/hooks'
import { api, type Page } from '../api'
import { Id, Loading, Time, plural } from '../components'
import { CardTable } from '../card-table'
import { href } from '../router'
import { useApi } from '../use-api'
import type { Delivery } from './delivery-table'
import { ResendFailed, type MessageResend } from './resend-failed'

interface Undelivered {
  messageId: string, endpointId: string, type: string | null, attempts: number, lastAttemptAt: string,
  lastHttpStatus: number | null, lastError: string | null
}

/** What a re-send of one message did, in words. */
function resent (outcome: MessageResend): string {
  if (outcome.endpointIds.length > 0) return `re-sent to ${plural(outcome.endpointIds.length, 'endpoint')}`
  return outcome.inFlight.length > 0 ? 'still in flight' : 'nothing to re-send'
}

/** Retries one message to one endpoint: its last delivery there is sent again. */
async function retryTo ({ messageId, endpointId }: Undelivered): Promise<string> {
  const message = await api<{ deliveries: Delivery[] }>('GET', `/messages/${encodeURIComponent(messageId)}`)
  const last = message.deliveries.filter((d) => d.endpointId === endpointId).at(-1)
  if (last === undefined) return 'no delivery to retry yet'
  const answer = await api<{ alreadyQueued: boolean }>('POST', `/deliveries/${encodeURIComponent(last.id)}/retry`)
  return answer.alreadyQueued ? 'a retry was already queued' : 'retry queued'
}

/**
 * Messages with an endpoint that has not had a success for them yet: each row retried to its endpoint, each
 * message re-sent to every endpoint that lacks it, or every message that ended failed re-sent at once.
 */
export function UndeliveredPage () {
  const undelivered = useApi<Page<Undelivered>>('/undelivered?limit=200')
  const [done, setDone] = useState<Record<string, string>>({})
  const note = (key: string, work: Promise<string>): void => {
    work.then((said) => setDone((all) => ({ ...all, [key]: said })), (error: Error) => setDone((all) => ({ ...all, [key]: error.message })))
  }
  return (
    <>
      <h1>Undelivered</h1>
      <ResendFailed onDone={() => undelivered.reload()} />
      <Loading loaded={undelivered} feature='outbound'>{(page) => (
        <CardTable>
          <caption>{page.next !== null ? `${page.items.length}+ messages` : plural(page.items.length, 'message')} not yet delivered</caption>
          <thead><tr>
            <th scope='col'>Message</th><th scope='col'>Endpoint</th><th scope='col'>Type</th><th scope='col' class='num'>Attempts</th>
            <th scope='col'>Last attempt</th><th scope='col' class='num'>HTTP</th><th scope='col'>Error</th><th scope='col'>Action</th>
          </tr></thead>
          <tbody>{page.items.map((u) => {
            const pair = `${u.messageId}.${u.endpointId}`
            return (
              <tr key={pair}>
                <td data-label='Message'><a href={href(`/messages/${encodeURIComponent(u.messageId)}`)}><Id value={u.messageId} /></a></td>
                <td data-label='Endpoint'><a href={href('/deliveries', { endpoint: u.endpointId })} aria-label={`Deliveries of endpoint ${u.endpointId}`}><Id value={u.endpointId} /></a></td>
                <td data-label='Type'>{u.type ?? '—'}</td><td data-label='Attempts' class='num'>{u.attempts}</td>
                <td data-label='Last attempt'><Time value={u.lastAttemptAt} /></td><td data-label='HTTP' class='num'>{u.lastHttpStatus ?? '—'}</td>
                <td data-label='Error'>{u.lastError ?? ''}</td>
                <td data-label='Action'><div class='actions'>
                  {done[pair] ?? <button type='button' onClick={() => note(pair, retryTo(u))} aria-label={`Retry message ${u.messageId} to endpoint ${u.endpointId}`}>Retry</button>}
                  {done[u.messageId] ?? <button type='button' onClick={() => note(u.messageId, api<MessageResend>('POST', `/messages/${encodeURIComponent(u.messageId)}/resend`).then(resent))}
                    aria-label={`Re-send message ${u.messageId}`} title='To every endpoint that has not had it'>Re-send to all</button>}
                </div></td>
              </tr>
            )
          })}</tbody>
        </CardTable>
      )}</Loading>
    </>
  )
}
