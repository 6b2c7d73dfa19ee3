import { Id, Loading, Status, Time, text } from '../components'
import { href } from '../router'
import { useApi } from '../use-api'
import { DeliveryTable, type Delivery } from './delivery-table'

interface Message {
  id: string, type: string, publicType: string | null, tenant: string | null, data: unknown,
  status: string, dispatchAttempts: number, lastDispatchError: string | null, createdAt: string, dispatchedAt: string | null,
  deliveries: Delivery[]
}

/** One outgoing message: what it carries (as text), and each delivery of it, newest first, to retry from. */
export function MessagePage ({ id }: { id: string }) {
  const message = useApi<Message>(`/messages/${encodeURIComponent(id)}`)
  return (
    <>
      <p><a href={href('/deliveries')}>← Deliveries</a></p>
      <h1>Message <Id value={id} /></h1>
      <Loading loaded={message} feature='outbound'>{(m) => (
        <>
          <dl class='facts'>
            <dt>Type</dt><dd>{m.type}{m.publicType !== null && m.publicType !== m.type ? ` (sent as ${m.publicType})` : ''}</dd>
            <dt>Tenant</dt><dd>{m.tenant ?? 'none'}</dd>
            <dt>Status</dt><dd data-testid='message-status'><Status value={m.status} /></dd>
            <dt>Published</dt><dd><Time value={m.createdAt} /></dd>
            <dt>Dispatched</dt><dd><Time value={m.dispatchedAt} /></dd>
            {m.lastDispatchError !== null && <><dt>Dispatch error</dt><dd>{m.lastDispatchError}</dd></>}
          </dl>
          <DeliveryTable items={[...m.deliveries].reverse()} onRetried={message.reload} ofMessage />
          <section aria-labelledby='data-title'>
            <h2 id='data-title'>Data</h2>
            {/* Text only: data holding markup shows as characters. */}
            <pre class='payload' data-testid='payload' tabIndex={0}>{JSON.stringify(m.data, null, 2) ?? text(m.data)}</pre>
          </section>
        </>
      )}</Loading>
    </>
  )
}
