import { useState } from 'preact/hooks'
import { api, type Page } from '../api'
import { ErrorNote, Field, Loading, Time } from '../components'
import { href } from '../router'
import { useApi } from '../use-api'

export interface Endpoint {
  id: string, url: string, tenant: string | null, eventTypes: string[], description: string, enabled: boolean,
  disabledReason: string | null, lastDeliveryAt: string | null, lastDeliveryStatus: string | null, failingSince: string | null
}

const typesOf = (value: string): string[] => value.split(/[\s,]+/).filter((t) => t !== '')

/** A secret is shown in full once, when created or rotated: this panel, until dismissed. */
function SecretOnce ({ secret, onClose }: { secret: { endpoint: string, value: string }, onClose: () => void }) {
  return (
    <div class='secret' role='status'>
      <p>The signing secret of <code>{secret.endpoint}</code>, shown only now: copy it to the receiver.</p>
      <p><code data-testid='secret'>{secret.value}</code></p>
      <button type='button' onClick={onClose}>I have copied it</button>
    </div>
  )
}

function CreateForm ({ onCreated }: { onCreated: (endpoint: Endpoint & { secret: string }) => void }) {
  const [url, setUrl] = useState('')
  const [types, setTypes] = useState('')
  const [description, setDescription] = useState('')
  const [error, setError] = useState<Error | null>(null)
  const submit = (e: Event): void => {
    e.preventDefault()
    setError(null)
    const body = { url, eventTypes: typesOf(types), ...(description === '' ? {} : { description }) }
    api<Endpoint & { secret: string }>('POST', '/endpoints', body).then((created) => {
      setUrl(''); setTypes(''); setDescription(''); onCreated(created)
    }, setError)
  }
  return (
    <form class='filters' aria-label='New endpoint' onSubmit={submit}>
      <Field label='URL'><input name='url' type='url' required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} /></Field>
      <Field label='Event types (comma-separated; empty: all)'><input name='eventTypes' value={types} onInput={(e) => setTypes((e.target as HTMLInputElement).value)} /></Field>
      <Field label='Description'><input name='description' value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} /></Field>
      <button type='submit'>Create endpoint</button>
      {error !== null && <ErrorNote error={error} />}
    </form>
  )
}

function EndpointRow ({ endpoint, onChanged, onSecret }: { endpoint: Endpoint, onChanged: () => void, onSecret: (value: string) => void }) {
  const path = `/endpoints/${encodeURIComponent(endpoint.id)}`
  const [types, setTypes] = useState(endpoint.eventTypes.join(', '))
  const [since, setSince] = useState('')
  const [note, setNote] = useState<string | null>(null)
  const [error, setError] = useState<Error | null>(null)
  const run = <T,>(label: string | ((result: T) => string), work: () => Promise<T>) => (e?: Event) => {
    e?.preventDefault()
    setError(null); setNote(null)
    work().then((result) => { setNote(typeof label === 'string' ? label : label(result)); onChanged() }, setError)
  }
  const recovered = ({ messageIds }: { messageIds: string[] }): string =>
    `Recovery queued: ${messageIds.length} ${messageIds.length === 1 ? 'message' : 'messages'}`
  return (
    <li class='endpoint' data-testid='endpoint'>
      <h3>{endpoint.url}</h3>
      <p>{endpoint.enabled ? 'Enabled' : `Disabled (${endpoint.disabledReason ?? 'by an operator'})`}
        {' · '}last delivery {endpoint.lastDeliveryStatus ?? 'none'} <Time value={endpoint.lastDeliveryAt} />
        {endpoint.failingSince !== null && <> · failing since <Time value={endpoint.failingSince} /></>}
        {' · '}<a href={href('/deliveries', { endpoint: endpoint.id })}>Deliveries</a></p>
      {endpoint.description !== '' && <p>{endpoint.description}</p>}
      <div class='actions'>
        <button type='button' onClick={run('Test event sent', async () => await api('POST', `${path}/test`))}>Send test event</button>
        <button type='button' onClick={run(endpoint.enabled ? 'Disabled' : 'Enabled', async () => await api('PATCH', path, { enabled: !endpoint.enabled }))}>{endpoint.enabled ? 'Disable' : 'Enable'}</button>
        <button type='button' onClick={run('Secret rotated', async () => onSecret((await api<{ secret: string }>('POST', `${path}/rotate-secret`)).secret))}>Rotate secret</button>
      </div>
      <form class='inline' aria-label={`Event types of ${endpoint.url}`} onSubmit={run('Event types saved', async () => await api('PATCH', path, { eventTypes: typesOf(types) }))}>
        <Field label='Event types'><input value={types} onInput={(e) => setTypes((e.target as HTMLInputElement).value)} /></Field>
        <button type='submit'>Save types</button>
      </form>
      <form class='inline' aria-label={`Recover ${endpoint.url}`} onSubmit={run(recovered, async () => await api<{ messageIds: string[] }>('POST', `${path}/recover`, { since }))}>
        <Field label='Re-send what failed since (ISO time)'><input value={since} required onInput={(e) => setSince((e.target as HTMLInputElement).value)} /></Field>
        <button type='submit'>Recover</button>
      </form>
      {note !== null && <p role='status' class='ok'>{note}</p>}
      {error !== null && <ErrorNote error={error} />}
    </li>
  )
}

export function Endpoints () {
  const endpoints = useApi<Page<Endpoint>>('/endpoints?limit=200')
  const [secret, setSecret] = useState<{ endpoint: string, value: string } | null>(null)
  return (
    <>
      <h1>Endpoints</h1>
      <Loading loaded={endpoints} feature='outbound'>{(page) => (
        <>
          {secret !== null && <SecretOnce secret={secret} onClose={() => setSecret(null)} />}
          <h2>New endpoint</h2>
          <CreateForm onCreated={(created) => { setSecret({ endpoint: created.url, value: created.secret }); endpoints.reload() }} />
          <h2>{page.items.length} endpoints</h2>
          <ul class='endpoints'>{page.items.map((e) => (
            <EndpointRow key={e.id} endpoint={e} onChanged={endpoints.reload} onSecret={(value) => setSecret({ endpoint: e.url, value })} />
          ))}</ul>
        </>
      )}</Loading>
    </>
  )
}
