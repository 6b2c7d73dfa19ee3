import { useState } from 'preact/hooks'
import { api } from '../api'
import { CopyButton, ErrorNote, Field, Id, Time, plural } from '../components'
import { href } from '../router'
import { useCanWrite, useScope } from '../scope'
import type { EventTypeItem } from '../catalog'
import { EventTypePicker } from './event-type-picker'
import { TestEventForm } from './test-event-form'

export interface Endpoint {
  id: string, url: string, tenant: string | null, eventTypes: string[], description: string, enabled: boolean,
  disabledReason: string | null, lastDeliveryAt: string | null, lastDeliveryStatus: string | null, failingSince: string | null
}

export const typesOf = (value: string): string[] => value.split(/[\s,]+/).filter((t) => t !== '')

/** How long the old secrets keep signing beside the new one; the server's default is a day. */
const GRACE = [['0', 'None: receivers must switch now'], ['3600', '1 hour'], ['86400', '24 hours'], ['604800', '7 days']] as const
const DEFAULT_GRACE = '86400'

/** A secret is shown in full once, when created or rotated: beside its endpoint, until dismissed. */
export function SecretOnce ({ secret, onClose }: { secret: string, onClose: () => void }) {
  return (
    <div class='secret' role='status'>
      <p>The signing secret, shown only now: copy it to the receiver.</p>
      <p class='actions'><code data-testid='secret'>{secret}</code><CopyButton value={secret} label='Copy the secret' /></p>
      <button type='button' onClick={onClose}>I have copied it</button>
    </div>
  )
}

/** Rotation asks first, with the grace period to choose, and only then makes a new secret. */
function RotateConfirm ({ endpoint, onRotate, onCancel }: { endpoint: Endpoint, onRotate: (graceSeconds: number) => void, onCancel: () => void }) {
  const [grace, setGrace] = useState<string>(DEFAULT_GRACE)
  const id = `rotate-${endpoint.id}`
  return (
    <div role='alertdialog' aria-labelledby={id} class='confirm'>
      <p id={id}>Rotate the signing secret of this endpoint? Its receiver needs the new one; the old one signs beside it only for the grace period.</p>
      <Field label='Grace period'>
        <select name='graceSeconds' value={grace} onChange={(e) => setGrace((e.target as HTMLSelectElement).value)}>
          {GRACE.map(([seconds, label]) => <option key={seconds} value={seconds}>{label}</option>)}
        </select>
      </Field>
      <div class='actions'>
        <button type='button' class='primary' onClick={() => onRotate(Number(grace))}>Rotate now</button>
        <button type='button' onClick={onCancel}>Cancel</button>
      </div>
    </div>
  )
}

/** Subscriptions: a text field for the operator (any type), the catalog's checkboxes in the portal. */
function TypesForm ({ endpoint, catalog, onSave }: { endpoint: Endpoint, catalog?: EventTypeItem[], onSave: (types: string[]) => (e: Event) => void }) {
  const [types, setTypes] = useState(endpoint.eventTypes.join(', '))
  const [picked, setPicked] = useState(endpoint.eventTypes)
  if (catalog !== undefined) {
    return (
      <form class='inline' aria-label={`Event types of ${endpoint.url}`} onSubmit={onSave(picked)}>
        <EventTypePicker catalog={catalog} value={picked} onChange={setPicked} legend='Event types' />
        <button type='submit'>Save types</button>
      </form>
    )
  }
  return (
    <form class='inline' aria-label={`Event types of ${endpoint.url}`} onSubmit={onSave(typesOf(types))}>
      <Field label='Event types'><input value={types} onInput={(e) => setTypes((e.target as HTMLInputElement).value)} /></Field>
      <button type='submit'>Save types</button>
    </form>
  )
}

/**
 * One endpoint and what can be done to it. With a `catalog` (the portal), subscriptions are picked from it and a
 * test event carries a sample of the chosen type; a tenant's developer sees neither the tenant nor its form.
 */
export function EndpointRow ({ endpoint, secret, catalog, onChanged, onSecret }: { endpoint: Endpoint, secret: string | null, catalog?: EventTypeItem[], onChanged: () => void, onSecret: (value: string | null) => void }) {
  const operator = useScope() === 'operator'
  const canWrite = useCanWrite()
  const path = `/endpoints/${encodeURIComponent(endpoint.id)}`
  const [testing, setTesting] = useState(false)
  const [tenant, setTenant] = useState(endpoint.tenant ?? '')
  const [since, setSince] = useState('')
  const [rotating, setRotating] = useState(false)
  const [note, setNote] = useState<string | null>(null)
  const [error, setError] = useState<Error | null>(null)
  const run = <T,>(label: string | ((result: T) => string), work: () => Promise<T>) => (e?: Event) => {
    e?.preventDefault()
    setError(null); setNote(null)
    work().then((result) => { setNote(typeof label === 'string' ? label : label(result)); onChanged() }, setError)
  }
  const rotate = (graceSeconds: number): void => {
    setRotating(false)
    run('Secret rotated', async () => onSecret((await api<{ secret: string }>('POST', `${path}/rotate-secret`, { graceSeconds })).secret))()
  }
  const recovered = ({ messageIds }: { messageIds: string[] }): string => `Recovery queued: ${plural(messageIds.length, 'message')}`
  return (
    <li class='endpoint' data-testid='endpoint'>
      <h3 title={endpoint.url}>{endpoint.url}</h3>
      <p class='meta'>
        {operator && <><span data-testid='tenant'>{endpoint.tenant === null ? 'No tenant' : <>Tenant <a href={href('/endpoints', { tenant: endpoint.tenant })}>{endpoint.tenant}</a></>}</span>{' · '}</>}
        {endpoint.enabled ? 'Enabled' : `Disabled (${endpoint.disabledReason ?? 'by an operator'})`}
        {' · '}{endpoint.lastDeliveryAt === null ? 'no delivery yet' : <>last delivery {endpoint.lastDeliveryStatus ?? 'unknown'} <Time value={endpoint.lastDeliveryAt} /></>}
        {endpoint.failingSince !== null && <> · failing since <Time value={endpoint.failingSince} /></>}
        {' · '}<a href={href('/deliveries', { endpoint: endpoint.id })}>Deliveries</a>
        {' · '}<Id value={endpoint.id} /></p>
      {endpoint.description !== '' && <p>{endpoint.description}</p>}
      {secret !== null && <SecretOnce secret={secret} onClose={() => onSecret(null)} />}
      {!canWrite && <p class='meta' data-testid='types'>Event types: {endpoint.eventTypes.length === 0 ? 'every type' : endpoint.eventTypes.join(', ')}</p>}
      {canWrite && <>
        <div class='actions'>
          {catalog === undefined
            ? <button type='button' onClick={run('Test event sent', async () => await api('POST', `${path}/test`))}>Send test event</button>
            : <button type='button' onClick={() => setTesting(true)} aria-expanded={testing}>Send test event…</button>}
          <button type='button' onClick={run(endpoint.enabled ? 'Disabled' : 'Enabled', async () => await api('PATCH', path, { enabled: !endpoint.enabled }))}>{endpoint.enabled ? 'Disable' : 'Enable'}</button>
          <button type='button' onClick={() => setRotating(true)} aria-expanded={rotating}>Rotate secret…</button>
        </div>
        {rotating && <RotateConfirm endpoint={endpoint} onRotate={rotate} onCancel={() => setRotating(false)} />}
        {testing && catalog !== undefined && <TestEventForm endpoint={endpoint} catalog={catalog} onCancel={() => setTesting(false)}
          onSent={(messageId) => { setTesting(false); setError(null); setNote(`Test event sent: message ${messageId}`); onChanged() }} />}
        <div class='settings'>
          <TypesForm endpoint={endpoint} catalog={catalog} onSave={(eventTypes) => run('Event types saved', async () => await api('PATCH', path, { eventTypes }))} />
          {operator && <form class='inline' aria-label={`Tenant of ${endpoint.url}`} onSubmit={run('Tenant saved', async () => await api('PATCH', path, { tenant: tenant.trim() === '' ? null : tenant.trim() }))}>
            <Field label='Tenant (empty: none)'><input name='tenant' value={tenant} onInput={(e) => setTenant((e.target as HTMLInputElement).value)} /></Field>
            <button type='submit'>Save tenant</button>
          </form>}
          <form class='inline' aria-label={`Recover ${endpoint.url}`} onSubmit={run(recovered, async () => await api<{ messageIds: string[] }>('POST', `${path}/recover`, { since }))}>
            <Field label='Re-send what failed since (ISO time)'><input value={since} required onInput={(e) => setSince((e.target as HTMLInputElement).value)} /></Field>
            <button type='submit'>Recover</button>
          </form>
        </div>
      </>}
      {note !== null && <p role='status' class='ok'>{note}</p>}
      {error !== null && <ErrorNote error={error} />}
    </li>
  )
}
