import { useState } from 'preact/hooks'
import { api } from '../api'
import { Id, Status, Time, Url, plural } from '../components'
import { href } from '../router'
import { useCanWrite } from '../scope'
import { CardTable } from '../card-table'
import type { DeliveryTriggerName } from '../../../src/delivery-log/delivery-schemas'

export interface Delivery {
  id: string, messageId: string, endpointId: string, attempt: number, status: 'started' | 'success' | 'failed',
  httpStatus: number | null, durationMs: number, error?: string, responseHead?: string, createdAt: string,
  trigger: DeliveryTriggerName, deliveredLater: boolean, eventType?: string | null, endpointUrl?: string | null
}

/** A hand send says what it was: the log never shows a hand retry as "attempt 1" again. */
const TRIGGERS: Record<DeliveryTriggerName, string> = { schedule: '', retry: 'Hand retry', recover: 'Recovered', resend: 'Re-sent' }

export function attemptLabel (d: Pick<Delivery, 'attempt' | 'trigger'>): string {
  return d.trigger === 'schedule' ? `Attempt ${d.attempt}` : TRIGGERS[d.trigger]
}

/**
 * Retry a failed attempt; one whose message reached the endpoint since, or a success, would deliver a duplicate:
 * it asks first. The answer shows in the row.
 */
function RetryCell ({ d, onRetried }: { d: Delivery, onRetried: () => void }) {
  const [state, setState] = useState<'idle' | 'confirm' | 'sending' | 'queued' | 'already' | Error>('idle')
  const duplicate = d.status === 'success' || d.deliveredLater
  const label = d.status === 'failed' && !d.deliveredLater ? 'Retry' : 'Send again…'
  const send = (): void => {
    setState('sending')
    api<{ alreadyQueued: boolean }>('POST', `/deliveries/${encodeURIComponent(d.id)}/retry`)
      .then((answer) => { setState(answer.alreadyQueued ? 'already' : 'queued'); onRetried() }, (error: Error) => setState(error))
  }
  if (state === 'queued' || state === 'already') return <span role='status' class='ok'>{state === 'queued' ? 'Retry queued' : 'A retry was already queued'}</span>
  if (state instanceof Error) return <span role='alert' class='error'>{state.message}</span>
  if (state === 'confirm') {
    return (
      <span role='group' aria-label={`Confirm sending delivery ${d.id} again`} class='actions'>
        <span>{d.status === 'success' ? 'It was delivered.' : 'Delivered since.'} Send a duplicate?</span>
        <button type='button' class='primary' onClick={send}>Send</button>
        <button type='button' onClick={() => setState('idle')}>Cancel</button>
      </span>
    )
  }
  return (
    <button type='button' disabled={state === 'sending'} onClick={() => duplicate ? setState('confirm') : send()} aria-label={`${label.replace('…', '')}: delivery ${d.id}`}>
      {label}
    </button>
  )
}

/**
 * Attempts with their answer, each message a link to its page (no such column on the message's own page),
 * each one sent again from its row. Where its columns do not fit, each row is a card, its cells labelled.
 */
export function DeliveryTable ({ items, onRetried, ofMessage = false, showEndpoint = true, caption }: {
  items: Delivery[], onRetried: () => void, ofMessage?: boolean, showEndpoint?: boolean, caption?: string
}) {
  const canWrite = useCanWrite()
  return (
    <CardTable class='data'>
      <caption>{caption ?? plural(items.length, 'delivery', 'deliveries')}</caption>
      <thead><tr>
        <th scope='col'>At</th><th scope='col'>Status</th><th scope='col' class='num'>HTTP</th><th scope='col'>Attempt</th><th scope='col' class='num'>Time</th>
        {!ofMessage && <th scope='col'>Message</th>}{showEndpoint && <th scope='col'>Endpoint</th>}<th scope='col'>Answer</th>
        {canWrite && <th scope='col'>Action</th>}
      </tr></thead>
      <tbody>{items.map((d) => (
        <tr key={d.id} data-testid='delivery'>
          <td data-label='At'><Time value={d.createdAt} /></td>
          <td data-label='Status'><Status value={d.status} />{d.deliveredLater && <span class='muted'> delivered since</span>}</td>
          <td data-label='HTTP' class='num'>{d.httpStatus ?? '—'}</td>
          <td data-label='Attempt' data-testid='attempt'>{attemptLabel(d)}</td>
          <td data-label='Time' class='num'>{d.durationMs} ms</td>
          {!ofMessage && (
            <td data-label='Message'>
              {d.eventType != null && <span class='event-type' data-testid='event-type'>{d.eventType} </span>}
              <a href={href(`/messages/${encodeURIComponent(d.messageId)}`)}><Id value={d.messageId} /></a>
            </td>
          )}
          {showEndpoint && (
            <td data-label='Endpoint'>
              <a href={href(`/endpoints/${encodeURIComponent(d.endpointId)}`)} aria-label={`Endpoint ${d.endpointUrl ?? d.endpointId}`}>
                {d.endpointUrl != null ? <Url value={d.endpointUrl} /> : <Id value={d.endpointId} />}
              </a>
            </td>
          )}
          <td data-label='Answer' class='answer'>{d.error !== undefined && <span>{d.error}</span>}{d.responseHead !== undefined && d.responseHead !== '' && <code class='raw excerpt'>{d.responseHead}</code>}</td>
          {canWrite && <td data-label='Action'><RetryCell d={d} onRetried={onRetried} /></td>}
        </tr>
      ))}</tbody>
    </CardTable>
  )
}
