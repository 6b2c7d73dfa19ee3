import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { api, query, serves, type Page } from '../api'
import { ErrorNote, Field, Loading, Time, Url, plural } from '../components'
import { href, type Route } from '../router'
import { useCanWrite, useScope } from '../scope'
import { useApi } from '../use-api'
import type { EventTypeItem } from '../catalog'
import { EventTypePicker, aboutTenant } from './event-type-picker'
import { SecretOnce } from './endpoint-secret'
import { HeaderRows, headersOf, type HeaderRow } from './endpoint-headers'
import { PortalLink } from './portal-link'
import { percent, stateOf, type Endpoint, type EndpointSummary } from './endpoint-types'

/**
 * A new endpoint, its types picked from the catalog; an operator may name its tenant (the portal's is the token's).
 * An operational endpoint (`POST /operational-endpoints`) picks from the operational types and has no tenant.
 */
function CreateForm ({ catalog, operational, onCreated, onCancel }: {
  catalog: EventTypeItem[], operational: boolean, onCreated: (endpoint: Endpoint & { secret: string }) => void, onCancel: () => void
}) {
  const scope = useScope()
  const [url, setUrl] = useState('')
  const [picked, setPicked] = useState<string[]>([])
  const [tenant, setTenant] = useState('')
  const [description, setDescription] = useState('')
  const [headers, setHeaders] = useState<HeaderRow[]>([])
  const [signing, setSigning] = useState<'hmac' | 'ed25519'>('hmac')
  const [error, setError] = useState<Error | null>(null)
  const submit = (e: Event): void => {
    e.preventDefault()
    setError(null)
    const custom = headersOf(headers)
    const body = {
      url, eventTypes: picked, ...(tenant.trim() === '' ? {} : { tenant: tenant.trim() }), ...(description === '' ? {} : { description }),
      ...(Object.keys(custom).length === 0 ? {} : { headers: custom }), ...(signing === 'hmac' ? {} : { signing })
    }
    api<Endpoint & { secret: string }>('POST', operational ? '/operational-endpoints' : '/endpoints', body).then(onCreated, setError)
  }
  const title = operational ? 'New operational endpoint' : 'New endpoint'
  return (
    <form class='panel' aria-label={title} onSubmit={submit}>
      <h2>{title}</h2>
      <div class='filters'>
        <Field label='URL'><input name='url' type='url' required value={url} placeholder='https://' onInput={(e) => setUrl((e.target as HTMLInputElement).value)} /></Field>
        <Field label='Description'><input name='description' value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} /></Field>
        {!operational && (
          <Field label='Signing'>
            <select name='signing' value={signing} onChange={(e) => setSigning((e.target as HTMLSelectElement).value as 'hmac' | 'ed25519')}>
              <option value='hmac'>HMAC-SHA256 (a shared secret)</option><option value='ed25519'>Ed25519 (a public key)</option>
            </select>
          </Field>
        )}
        {scope === 'operator' && !operational && <Field label='Tenant (optional)'><input name='tenant' value={tenant} onInput={(e) => setTenant((e.target as HTMLInputElement).value)} /></Field>}
      </div>
      <EventTypePicker catalog={catalog} value={picked} onChange={setPicked} legend={operational ? 'Operational events' : 'Event types'}
        operational={operational} about={aboutTenant(scope, tenant.trim() === '' ? null : tenant.trim())} />
      {!operational && <HeaderRows rows={headers} onChange={setHeaders} />}
      <div class='actions'>
        <button type='submit' class='primary'>Create endpoint</button>
        <button type='button' onClick={onCancel}>Cancel</button>
      </div>
      {error !== null && <ErrorNote error={error} />}
    </form>
  )
}

/** An endpoint's tenant, a link to its endpoints (an operator's view). */
export function TenantLink ({ tenant }: { tenant: string | null }) {
  return tenant === null ? <>none</> : <a href={href('/endpoints', { tenant })}>{tenant}</a>
}

export function StateBadge ({ endpoint }: { endpoint: Endpoint }) {
  const state = stateOf(endpoint)
  const tone = state === 'enabled' ? 'ok' : state === 'failing' ? 'busy' : 'bad'
  return <span class={`status tone-${tone}`} data-testid='state'>{state}</span>
}

/** One endpoint in the list: where it sends, its state, a day's success rate and its last delivery. */
function EndpointCard ({ endpoint, summary, loading, showTenant }: { endpoint: Endpoint, summary: EndpointSummary | undefined, loading: boolean, showTenant: boolean }) {
  return (
    <li class='endpoint-card' data-testid='endpoint'>
      <div class='endpoint-head'>
        <a class='endpoint-url' href={href(`/endpoints/${encodeURIComponent(endpoint.id)}`)} title={endpoint.url}><Url value={endpoint.url} /></a>
        <StateBadge endpoint={endpoint} />
      </div>
      {endpoint.description !== '' && <p class='description'>{endpoint.description}</p>}
      <dl class='stats-line'>
        <div><dt>Success, 24 h</dt><dd data-testid='success-rate' aria-busy={loading && summary === undefined ? 'true' : undefined}>{percent(summary?.successRate ?? null)}</dd></div>
        <div><dt>Last delivery</dt><dd data-testid='last-delivery'>{summary?.lastAttemptAt != null ? <Time value={summary.lastAttemptAt} /> : endpoint.lastDeliveryAt !== null ? <Time value={endpoint.lastDeliveryAt} /> : 'none yet'}</dd></div>
        {showTenant && <div><dt>Tenant</dt><dd data-testid='tenant'><TenantLink tenant={endpoint.tenant} /></dd></div>}
      </dl>
    </li>
  )
}

/**
 * A list of endpoints as cards, with its Add form and the new secret shown once: the endpoints (`/endpoints`) or
 * the operational endpoints (`/operational-endpoints`). `count` says what the list holds, under the title.
 */
function EndpointList ({ title, path, operational, count, empty, children }: {
  title: string, path: string, operational: boolean, count: (page: Page<Endpoint>) => ComponentChildren, empty: string, children?: ComponentChildren
}) {
  const operator = useScope() === 'operator'
  const canWrite = useCanWrite()
  const endpoints = useApi<Page<Endpoint>>(path)
  const ids = endpoints.data?.items.map((e) => e.id).join(',') ?? ''
  const summaries = useApi<{ items: EndpointSummary[] }>(ids === '' ? null : `/endpoint-stats${query({ ids })}`)
  // An operational endpoint takes operational events only: no catalog to pick from.
  const catalog = useApi<{ items: EventTypeItem[] }>(operational ? null : '/event-types')
  const [adding, setAdding] = useState(false)
  const [secret, setSecret] = useState<{ endpointId: string, value: string } | null>(null)
  const summaryOf = (id: string): EndpointSummary | undefined => summaries.data?.items.find((s) => s.endpointId === id)
  return (
    <>
      <div class='title-row'>
        <h1>{title}</h1>
        {canWrite && !adding && serves('outbound') && <button type='button' class='primary' onClick={() => setAdding(true)}>Add endpoint</button>}
      </div>
      {children}
      <Loading loaded={endpoints} feature='outbound'>{(page) => (
        <>
          {adding && <CreateForm catalog={catalog.data?.items ?? []} operational={operational} onCancel={() => setAdding(false)}
            onCreated={(created) => { setAdding(false); setSecret({ endpointId: created.id, value: created.secret }); endpoints.reload() }} />}
          {secret !== null && (
            <SecretOnce secret={secret.value} onClose={() => setSecret(null)}>
              <a href={href(`/endpoints/${encodeURIComponent(secret.endpointId)}`)}>Open the new endpoint</a>
            </SecretOnce>
          )}
          <p class='muted' data-testid='endpoint-count'>{count(page)}</p>
          {page.items.length === 0
            ? <p class='empty'>{empty}</p>
            : <ul class='endpoint-list'>{page.items.map((e) => <EndpointCard key={e.id} endpoint={e} summary={summaryOf(e.id)} loading={summaries.loading} showTenant={operator && !operational} />)}</ul>}
        </>
      )}</Loading>
    </>
  )
}

/** The endpoints (of one tenant, when the URL names it, or the portal's token does): each opens its own page. */
export function Endpoints ({ route }: { route: Route }) {
  const portal = useScope() === 'tenant'
  const canWrite = useCanWrite()
  const tenant = portal ? undefined : route.params.get('tenant') ?? undefined
  return (
    <EndpointList key={tenant} title='Endpoints' path={`/endpoints${query({ tenant, limit: '200' })}`} operational={false}
      empty={`No endpoint yet.${canWrite ? ' Add one: its URL receives the events you pick.' : ''}`}
      count={(page) => <>{plural(page.items.length, 'endpoint')}{page.next !== null ? ' (the first page)' : ''}{tenant !== undefined ? ` of tenant ${tenant}` : ''}
        {tenant !== undefined && <> · <a href={href('/endpoints')}>every tenant</a></>}</>}>
      {!portal && <PortalLink tenant={tenant} />}
    </EndpointList>
  )
}

/** The operator's endpoints for Anvil's own events (docs/outgoing-webhooks.md#operational-webhooks), of every tenant. */
export function OperationalEndpoints () {
  return (
    <EndpointList title='Operational endpoints' path='/operational-endpoints?limit=200' operational
      empty='No operational endpoint yet. Add one to hear when an endpoint fails or is disabled, a message runs out of attempts, or an inbound event is dead-lettered.'
      count={(page) => <>{plural(page.items.length, 'operational endpoint')}{page.next !== null ? ' (the first page)' : ''}: they receive Anvil’s own events, about every tenant</>} />
  )
}
