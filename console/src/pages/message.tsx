import { Id, Loading, Status, Time, text } from '../components'
import { href } from '../router'
import { useApi } from '../use-api'
import { DeliveryTable, attemptLabel, type Delivery } from './delivery-table'

interface Attempt extends Delivery { requestHeaders?: Record<string, string>, responseHeaders?: Record<string, string> }

interface Message {
  id: string, type: string, publicType: string | null, tenant: string | null, data: unknown,
  status: string, dispatchAttempts: number, lastDispatchError: string | null, createdAt: string, dispatchedAt: string | null,
  deliveries: Attempt[]
}

function Headers ({ title, headers }: { title: string, headers: Record<string, string> | undefined }) {
  if (headers === undefined) return <p class='muted'>{title}: not recorded.</p>
  return (
    <table class='headers'>
      <caption>{title}</caption>
      <tbody>{Object.entries(headers).map(([name, value]) => <tr key={name}><th scope='row'><code class='name'>{name}</code></th><td><code class='raw'>{value}</code></td></tr>)}</tbody>
    </table>
  )
}

/** One attempt in full: what was sent (headers; the body is the payload below) and what came back, capped and redacted. */
function AttemptDetail ({ attempt }: { attempt: Attempt }) {
  return (
    <details class='attempt' data-testid='attempt-detail'>
      <summary>
        <Time value={attempt.createdAt} /> · {attemptLabel(attempt)} · <Status value={attempt.status} /> · HTTP {attempt.httpStatus ?? '—'} · {attempt.durationMs} ms
        {' '}to <Id value={attempt.endpointId} />
      </summary>
      <div class='attempt-body'>
        <Headers title='Request headers' headers={attempt.requestHeaders} />
        <Headers title='Response headers' headers={attempt.responseHeaders} />
        <h4>Response body</h4>
        {attempt.error !== undefined && <p class='error'>{attempt.error}</p>}
        <pre class='payload' tabIndex={0} data-testid='response-body'>{attempt.responseHead ?? '(empty)'}</pre>
      </div>
    </details>
  )
}

/** One outgoing message: its type, every attempt (to retry from, and each in full), and its payload as text. */
export function MessagePage ({ id }: { id: string }) {
  const message = useApi<Message>(`/messages/${encodeURIComponent(id)}`, (m) => m.status === 'pending' || m.deliveries.some((d) => d.status === 'started'))
  return (
    <>
      <p><a href={href('/deliveries')}>← Deliveries</a></p>
      <h1>Message <Id value={id} /></h1>
      <Loading loaded={message} feature='outbound'>{(m) => {
        const endpoints = [...new Set(m.deliveries.map((d) => d.endpointId))]
        return (
          <>
            <dl class='facts'>
              <dt>Type</dt><dd data-testid='message-type'><code>{m.publicType ?? m.type}</code>{m.publicType !== null && m.publicType !== m.type ? ` (published as ${m.type})` : ''}</dd>
              <dt>{endpoints.length === 1 ? 'Endpoint' : 'Endpoints'}</dt>
              <dd>{endpoints.length === 0 ? 'none yet' : endpoints.map((e, i) => <span key={e}>{i > 0 ? ', ' : ''}<a href={href(`/endpoints/${encodeURIComponent(e)}`)}><Id value={e} /></a></span>)}</dd>
              {m.tenant !== null && <><dt>Tenant</dt><dd>{m.tenant}</dd></>}
              <dt>Status</dt><dd data-testid='message-status'><Status value={m.status} /></dd>
              <dt>Published</dt><dd><Time value={m.createdAt} /></dd>
              {m.lastDispatchError !== null && <><dt>Dispatch error</dt><dd>{m.lastDispatchError}</dd></>}
            </dl>
            <DeliveryTable items={[...m.deliveries].reverse()} onRetried={message.reload} ofMessage caption='Attempts' />
            <section aria-labelledby='attempts-detail-title'>
              <h2 id='attempts-detail-title'>Each attempt in full</h2>
              {m.deliveries.length === 0 ? <p class='empty'>No attempt yet.</p> : [...m.deliveries].reverse().map((d) => <AttemptDetail key={d.id} attempt={d} />)}
            </section>
            <section aria-labelledby='data-title'>
              <h2 id='data-title'>Payload</h2>
              {/* Text only: data holding markup shows as characters. */}
              <pre class='payload' data-testid='payload' tabIndex={0}>{JSON.stringify(m.data, null, 2) ?? text(m.data)}</pre>
            </section>
          </>
        )
      }}</Loading>
    </>
  )
}
