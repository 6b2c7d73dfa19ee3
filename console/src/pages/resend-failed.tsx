import { useState } from 'preact/hooks'
import { api, type Page } from '../api'
import { ErrorNote, Id, plural } from '../components'
import { CardTable } from '../card-table'

export interface MessageResend { messageId: string, status: string, endpointIds: string[], inFlight: string[], delivered: string[] }
type Step = { at: 'idle' } | { at: 'planning' } | { at: 'confirm', plan: Page<MessageResend> } | { at: 'done', sent: MessageResend[] }

/** How many messages would go (or went), and how many deliveries in all. */
export function resendCount (items: MessageResend[]): string {
  const messages = items.filter((item) => item.endpointIds.length > 0).length
  const deliveries = items.reduce((sum, item) => sum + item.endpointIds.length, 0)
  return `${plural(messages, 'message')}, ${plural(deliveries, 'delivery', 'deliveries')} in all`
}

/** Re-send the messages that ended failed: a dry run says what would go where, then the re-send (a page of 200). */
export function ResendFailed ({ onDone }: { onDone: () => void }) {
  const [step, setStep] = useState<Step>({ at: 'idle' })
  const [error, setError] = useState<Error | null>(null)
  const act = (work: () => Promise<void>) => () => { setError(null); work().catch(setError) }
  const plan = act(async () => {
    setStep({ at: 'planning' })
    setStep({ at: 'confirm', plan: await api<Page<MessageResend>>('POST', '/messages/resend', { dryRun: true, limit: 200 }) })
  })
  const run = act(async () => {
    const page = await api<Page<MessageResend>>('POST', '/messages/resend', { limit: 200 })
    setStep({ at: 'done', sent: page.items })
    onDone()
  })
  const planned = step.at === 'confirm' ? step.plan.items.filter((item) => item.endpointIds.length > 0) : []
  return (
    <section class='bulk' aria-label='Failed messages'>
      {(step.at === 'idle' || step.at === 'planning') && <button type='button' onClick={plan} disabled={step.at === 'planning'}>Re-send failed messages…</button>}
      {step.at === 'confirm' && (
        <div role='alertdialog' aria-labelledby='resend-text' class='confirm'>
          <p id='resend-text'>Re-send {resendCount(step.plan.items)}{step.plan.next !== null ? ' (the first 200 failed messages)' : ''}? Endpoints that had a message never get it twice.</p>
          {planned.length > 0 && (
            <CardTable>
              <caption>What would be sent</caption>
              <thead><tr><th scope='col'>Message</th><th scope='col'>Was</th><th scope='col'>To endpoints</th><th scope='col'>Still in flight</th></tr></thead>
              <tbody>{planned.map((item) => (
                <tr key={item.messageId} data-testid='resend-plan'>
                  <td data-label='Message'><Id value={item.messageId} /></td><td data-label='Was'>{item.status}</td>
                  <td data-label='To endpoints'>{item.endpointIds.join(', ')}</td><td data-label='Still in flight'>{item.inFlight.join(', ')}</td>
                </tr>
              ))}</tbody>
            </CardTable>
          )}
          <button type='button' onClick={run} disabled={planned.length === 0}>Re-send {plural(planned.length, 'message')}</button>
          <button type='button' onClick={() => setStep({ at: 'idle' })}>Cancel</button>
        </div>
      )}
      {step.at === 'done' && <p role='status'>Re-sent {resendCount(step.sent)}</p>}
      {error !== null && <ErrorNote error={error} />}
    </section>
  )
}
