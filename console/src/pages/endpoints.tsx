import { useState } from 'preact/hooks'
import { api, query, type Page } from '../api'
import { ErrorNote, Field, Loading, plural } from '../components'
import { href, type Route } from '../router'
import { useCanWrite, useScope } from '../scope'
import { useApi } from '../use-api'
import { EndpointRow, SecretOnce, typesOf, type Endpoint } from './endpoint-row'
import type { EventTypeItem } from '../catalog'
import { EventTypePicker } from './event-type-picker'

/** A new endpoint: its types typed by the operator, or picked from the `catalog` (the portal, whose tenant is the token's). */
function CreateForm ({ catalog, onCreated }: { catalog?: EventTypeItem[], onCreated: (endpoint: Endpoint & { secret: string }) => void }) {
  const [url, setUrl] = useState('')
  const [types, setTypes] = useState('')
  const [picked, setPicked] = useState<string[]>([])
  const [tenant, setTenant] = useState('')
  const [description, setDescription] = useState('')
  const [error, setError] = useState<Error | null>(null)
  const submit = (e: Event): void => {
    e.preventDefault()
    setError(null)
    const eventTypes = catalog === undefined ? typesOf(types) : picked
    const body = { url, eventTypes, ...(tenant.trim() === '' ? {} : { tenant: tenant.trim() }), ...(description === '' ? {} : { description }) }
    api<Endpoint & { secret: string }>('POST', '/endpoints', body).then((created) => {
      setUrl(''); setTypes(''); setPicked([]); setTenant(''); setDescription(''); onCreated(created)
    }, setError)
  }
  return (
    <form class='filters' aria-label='New endpoint' onSubmit={submit}>
      <Field label='URL'><input name='url' type='url' required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} /></Field>
      {catalog === undefined && <Field label='Event types (comma-separated; empty: all)'><input name='eventTypes' value={types} onInput={(e) => setTypes((e.target as HTMLInputElement).value)} /></Field>}
      {catalog === undefined && <Field label='Tenant (optional)'><input name='tenant' value={tenant} onInput={(e) => setTenant((e.target as HTMLInputElement).value)} /></Field>}
      <Field label='Description'><input name='description' value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} /></Field>
      {catalog !== undefined && <EventTypePicker catalog={catalog} value={picked} onChange={setPicked} legend='Event types' />}
      <button type='submit' class='primary'>Create endpoint</button>
      {error !== null && <ErrorNote error={error} />}
    </form>
  )
}

/**
 * The endpoints (of one tenant, when the URL names it, or the portal's token does); a secret made here shows once,
 * beside its endpoint. In the portal, event types come from the catalog.
 */
export function Endpoints ({ route }: { route: Route }) {
  const portal = useScope() === 'tenant'
  const canWrite = useCanWrite()
  const tenant = portal ? undefined : route.params.get('tenant') ?? undefined
  const endpoints = useApi<Page<Endpoint>>(`/endpoints${query({ tenant, limit: '200' })}`)
  const types = useApi<{ items: EventTypeItem[] }>(portal ? '/event-types' : null)
  const catalog = portal ? types.data?.items ?? [] : undefined
  const [secret, setSecret] = useState<{ endpointId: string, value: string } | null>(null)
  const secretFor = (id: string): string | null => secret?.endpointId === id ? secret.value : null
  return (
    <>
      <h1>Endpoints</h1>
      <Loading loaded={endpoints} feature='outbound'>{(page) => (
        <>
          {canWrite && <>
            <h2>New endpoint</h2>
            <CreateForm catalog={catalog} onCreated={(created) => { setSecret({ endpointId: created.id, value: created.secret }); endpoints.reload() }} />
          </>}
          {/* A new endpoint past the listed page still has its secret shown. */}
          {secret !== null && page.next !== null && !page.items.some((e) => e.id === secret.endpointId) && <SecretOnce secret={secret.value} onClose={() => setSecret(null)} />}
          <h2>{plural(page.items.length, 'endpoint')}{page.next !== null ? ' (the first page)' : ''}{tenant !== undefined ? ` of tenant ${tenant}` : ''}</h2>
          {tenant !== undefined && <p><a href={href('/endpoints')}>Every tenant</a></p>}
          <ul class='endpoints'>{page.items.map((e) => (
            <EndpointRow key={e.id} endpoint={e} secret={secretFor(e.id)} catalog={catalog} onChanged={endpoints.reload}
              onSecret={(value) => setSecret(value === null ? null : { endpointId: e.id, value })} />
          ))}</ul>
        </>
      )}</Loading>
    </>
  )
}
