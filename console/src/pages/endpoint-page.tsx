import type { FunctionComponent } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, query, type Page } from '../api'
import { ErrorNote, Field, Id, Loading, Url, plural } from '../components'
import { href, navigate } from '../router'
import { useCanWrite, useScope } from '../scope'
import { REFRESH_MS, useApi } from '../use-api'
import { useEventTypes, type EventTypeItem } from '../catalog'
import { EventTypePicker, aboutTenant } from './event-type-picker'
import { PortalLink } from './portal-link'
import { DeliveryTable, type Delivery } from './delivery-table'
import { EndpointOverview } from './endpoint-overview'
import { SecretSection } from './endpoint-secret'
import { HeadersSection } from './endpoint-headers'
import { ReceiverAuthSection } from './endpoint-receiver-auth'
import { StateBadge, TenantLink } from './endpoints'
import { TestEventForm } from './test-event-form'
import type { Endpoint } from './endpoint-types'

/** What every section of the endpoint page is given. */
export interface SectionProps {
  endpoint: Endpoint
  catalog: EventTypeItem[]
  /** The endpoint changed: read it again. */
  onChanged: () => void
  /** Something was sent: the attempts and the overview refresh until it shows. */
  onSent: () => void
  /** Bumped on each refresh of the attempts. */
  version: number
  /** An operator's operational endpoint: it takes Anvil's operational events only. */
  operational: boolean
}

/** A section's own feedback, beside the control that acted. */
function useAction () {
  const [note, setNote] = useState<string | null>(null)
  const [error, setError] = useState<Error | null>(null)
  const [busy, setBusy] = useState(false)
  const run = <T,>(work: () => Promise<T>, done: (result: T) => string) => {
    setNote(null); setError(null); setBusy(true)
    work().then((result) => { setBusy(false); setNote(done(result)) }, (err: Error) => { setBusy(false); setError(err) })
  }
  const feedback = <>{note !== null && <p role='status' class='ok'>{note}</p>}{error !== null && <ErrorNote error={error} />}</>
  return { run, busy, feedback }
}

function Subscriptions ({ endpoint, catalog, onChanged, operational }: SectionProps) {
  const canWrite = useCanWrite()
  const scope = useScope()
  const [picked, setPicked] = useState(endpoint.eventTypes)
  const { run, busy, feedback } = useAction()
  const save = (e: Event): void => {
    e.preventDefault()
    run(async () => await api('PATCH', `/endpoints/${encodeURIComponent(endpoint.id)}`, { eventTypes: picked }), () => { onChanged(); return 'Subscriptions saved' })
  }
  return (
    <section aria-labelledby='subscriptions-title' class='panel'>
      <h2 id='subscriptions-title'>Subscriptions</h2>
      {!canWrite
        ? <p data-testid='types'>{endpoint.eventTypes.length === 0 ? 'Every event type.' : endpoint.eventTypes.join(', ')}</p>
        : (
          <form aria-label='Subscriptions' onSubmit={save}>
            <EventTypePicker catalog={catalog} value={picked} onChange={setPicked} legend='Event types this endpoint receives'
              operational={operational} about={aboutTenant(scope, endpoint.tenant)} />
            <div class='actions'><button type='submit' disabled={busy}>Save subscriptions</button>{feedback}</div>
          </form>
          )}
    </section>
  )
}

function Testing ({ endpoint, catalog, onSent }: SectionProps) {
  const [sent, setSent] = useState<string | null>(null)
  return (
    <section aria-labelledby='testing-title' class='panel'>
      <h2 id='testing-title'>Testing</h2>
      <TestEventForm endpoint={endpoint} catalog={catalog} onSent={(messageId) => { setSent(messageId); onSent() }} />
      {sent !== null && <p role='status' class='ok'>Test event sent: <a href={href(`/messages/${encodeURIComponent(sent)}`)}>message <Id value={sent} /></a>. Its delivery shows below.</p>}
    </section>
  )
}

/** An ISO time from a `datetime-local` value (the browser's time zone). */
const fromLocal = (value: string): string => new Date(value).toISOString()
const localValue = (date: Date): string => new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)

function Recover ({ endpoint, onSent }: SectionProps) {
  const [since, setSince] = useState(() => localValue(new Date(Date.now() - 24 * 3600_000)))
  const { run, busy, feedback } = useAction()
  const submit = (e: Event): void => {
    e.preventDefault()
    run(async () => await api<{ messageIds: string[] }>('POST', `/endpoints/${encodeURIComponent(endpoint.id)}/recover`, { since: fromLocal(since) }),
      ({ messageIds }) => { onSent(); return messageIds.length === 0 ? 'Nothing failed since then: nothing to re-send' : `Re-sending ${plural(messageIds.length, 'message')}: they show below as they go` })
  }
  return (
    <section aria-labelledby='recover-title' class='panel'>
      <h2 id='recover-title'>Recover</h2>
      <form class='filters' aria-label='Recover failed messages' onSubmit={submit}>
        <Field label='Re-send what failed since'><input type='datetime-local' name='since' required value={since} max={localValue(new Date())} onInput={(e) => setSince((e.target as HTMLInputElement).value)} /></Field>
        <button type='submit' disabled={busy}>Recover</button>
      </form>
      {feedback}
    </section>
  )
}

function Attempts ({ endpoint, onSent, version }: SectionProps) {
  const [status, setStatus] = useState('')
  // Read again by itself while an attempt is in flight, and after each send.
  const attempts = useApi<Page<Delivery>>(`/deliveries${query({ endpoint: endpoint.id, status, limit: '50' })}`,
    (page) => page.items.some((d) => d.status === 'started'))
  useEffect(() => { if (version > 0) attempts.reload() }, [version])
  return (
    <section aria-labelledby='attempts-title' class='panel'>
      <h2 id='attempts-title'>Delivery attempts</h2>
      <form class='filters' aria-label='Filter attempts' onSubmit={(e) => e.preventDefault()}>
        <Field label='Status'>
          <select name='status' value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
            <option value=''>any</option><option value='success'>success</option><option value='failed'>failed</option><option value='started'>in flight or unknown</option>
          </select>
        </Field>
      </form>
      <Loading loaded={attempts} feature='outbound'>{(page) => (
        <>
          {page.items.length === 0 ? <p class='empty'>No attempt {status === '' ? 'yet' : `with status ${status}`}.</p> : <DeliveryTable items={page.items} showEndpoint={false} onRetried={onSent} />}
          {page.next !== null && <p><a href={href('/deliveries', { endpoint: endpoint.id })}>Every attempt</a></p>}
        </>
      )}</Loading>
    </section>
  )
}

/**
 * The endpoint page's sections, in order: a later one (custom headers, a public key) is one more entry here, with
 * its own heading and its own feedback.
 */
export const ENDPOINT_SECTIONS: Array<{ key: string, Section: FunctionComponent<SectionProps>, write?: boolean }> = [
  { key: 'overview', Section: ({ endpoint, version }) => <EndpointOverview endpointId={endpoint.id} version={version} /> },
  { key: 'subscriptions', Section: Subscriptions },
  { key: 'secret', Section: ({ endpoint, onChanged }) => <SecretSection endpoint={endpoint} onChanged={onChanged} />, write: true },
  { key: 'headers', Section: ({ endpoint, onChanged }) => <HeadersSection endpoint={endpoint} onChanged={onChanged} /> },
  { key: 'receiver-auth', Section: ({ endpoint, onChanged }) => <ReceiverAuthSection endpoint={endpoint} onChanged={onChanged} /> },
  { key: 'testing', Section: Testing, write: true },
  { key: 'attempts', Section: Attempts },
  { key: 'recover', Section: Recover, write: true }
]

/** Removes an operational endpoint, after a confirmation; then back to their list. */
function RemoveOperational ({ endpoint }: { endpoint: Endpoint }) {
  const [confirming, setConfirming] = useState(false)
  const { run, busy, feedback } = useAction()
  if (!confirming) return <button type='button' onClick={() => setConfirming(true)}>Remove…</button>
  return (
    <span role='group' aria-label='Confirm removing this endpoint' class='actions'>
      <span>Remove this operational endpoint? It receives nothing more.</span>
      <button type='button' class='primary' disabled={busy} onClick={() => run(async () => await api('DELETE', `/operational-endpoints/${encodeURIComponent(endpoint.id)}`),
        () => { navigate('/operational-endpoints'); return 'Removed' })}>Remove</button>
      <button type='button' onClick={() => setConfirming(false)}>Cancel</button>
      {feedback}
    </span>
  )
}

/** Enable or disable, and (for an operator) the tenant: the endpoint's settings, each with its feedback. */
function Settings ({ endpoint, onChanged, operational }: { endpoint: Endpoint, onChanged: () => void, operational: boolean }) {
  const operator = useScope() === 'operator' && !operational
  const canWrite = useCanWrite()
  const [tenant, setTenant] = useState(endpoint.tenant ?? '')
  const toggle = useAction()
  const tenantAction = useAction()
  const path = `/endpoints/${encodeURIComponent(endpoint.id)}`
  if (!canWrite) return null
  return (
    <div class='actions'>
      <button type='button' disabled={toggle.busy} onClick={() => toggle.run(async () => await api('PATCH', path, { enabled: !endpoint.enabled }),
        () => { onChanged(); return endpoint.enabled ? 'Disabled: nothing is sent to it' : 'Enabled' })}>{endpoint.enabled ? 'Disable' : 'Enable'}</button>
      {toggle.feedback}
      {operational && <RemoveOperational endpoint={endpoint} />}
      {operator && (
        <form class='inline' aria-label='Tenant' onSubmit={(e) => {
          e.preventDefault()
          tenantAction.run(async () => await api('PATCH', path, { tenant: tenant.trim() === '' ? null : tenant.trim() }), () => { onChanged(); return 'Tenant saved' })
        }}>
          <Field label='Tenant (empty: none)'><input name='tenant' value={tenant} onInput={(e) => setTenant((e.target as HTMLInputElement).value)} /></Field>
          <button type='submit'>Save tenant</button>{tenantAction.feedback}
        </form>
      )}
    </div>
  )
}

/** How many times the page reads again after a send: a minute at REFRESH_MS. */
const WATCH_ROUNDS = 40

/** `#/endpoints/<id>`: one endpoint, its health, subscriptions, secret, tests, attempts and recovery. */
export function EndpointPage ({ id }: { id: string }) {
  const canWrite = useCanWrite()
  const operator = useScope() === 'operator'
  const endpoint = useApi<Endpoint>(`/endpoints/${encodeURIComponent(id)}`)
  // The API's endpoint does not say whether it is operational: their list does (an operator's only).
  const operationals = useApi<Page<{ id: string }>>(operator ? '/operational-endpoints?limit=200' : null)
  const operational = operationals.data?.items.some((o) => o.id === id) === true
  const catalog = useEventTypes()
  const list = operational ? '/operational-endpoints' : operator ? '/endpoints' : '/'
  const [version, setVersion] = useState(0)
  const [watching, setWatching] = useState(0)
  // After a send, the attempts and the overview are read again for a while (a busy worker may take its time), and
  // for as long as an attempt is in flight (Attempts' own refresh).
  const onSent = (): void => { setWatching(WATCH_ROUNDS); setVersion((v) => v + 1) }
  useEffect(() => {
    if (watching <= 0) return
    const timer = setTimeout(() => { setWatching((n) => n - 1); setVersion((v) => v + 1) }, REFRESH_MS)
    return () => clearTimeout(timer)
  }, [watching])
  return (
    <>
      <p><a href={href(list)}>← {operational ? 'Operational endpoints' : 'Endpoints'}</a></p>
      <Loading loaded={endpoint} feature='outbound'>{(e) => (
        <>
          <div class='title-row'>
            <h1 class='endpoint-title'><Url value={e.url} /></h1>
            <StateBadge endpoint={e} />
          </div>
          {e.description !== '' && <p>{e.description}</p>}
          <p class='meta'>
            <Id value={e.id} />{operational ? ' · operational: Anvil\'s own events, of every tenant' : operator && <> · tenant <span data-testid='tenant'><TenantLink tenant={e.tenant} /></span></>}
            {!e.enabled && <> · disabled: {e.disabledReason ?? 'by hand'}</>}
          </p>
          <Settings endpoint={e} onChanged={endpoint.reload} operational={operational} />
          {operator && e.tenant !== null && <PortalLink key={e.tenant} tenant={e.tenant} />}
          {/* The sections start from the catalog (the picker, the test event's type and sample) and the kind of endpoint: they wait for both. */}
          {(catalog.data === undefined && catalog.error === undefined) || operationals.loading
            ? <p aria-busy='true'>Loading…</p>
            : (
              <div class='sections'>
                {ENDPOINT_SECTIONS.filter((s) => canWrite || s.write !== true).map(({ key, Section }) => (
                  <Section key={key} endpoint={e} catalog={operational ? [] : catalog.data?.items ?? []} onChanged={endpoint.reload} onSent={onSent}
                    version={version} operational={operational} />
                ))}
              </div>
              )}
        </>
      )}</Loading>
    </>
  )
}
