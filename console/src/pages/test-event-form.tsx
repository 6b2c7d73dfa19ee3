import { useState } from 'preact/hooks'
import { api } from '../api'
import { ErrorNote, Field } from '../components'
import { sampleFromSchema } from '../sample-from-schema'
import type { EventTypeItem } from '../catalog'

/** Anvil's own test type, sent when no catalog type is chosen: `{ "test": true }`. */
const PLAIN = ''

const sample = (catalog: EventTypeItem[], type: string): string =>
  type === PLAIN ? '{\n  "test": true\n}' : JSON.stringify(sampleFromSchema(catalog.find((t) => t.name === type)?.schema), null, 2)

/**
 * A test event to this endpoint only: a type it subscribes to, with data made from the type's schema, which can be
 * edited before it goes (`POST /endpoints/:id/test`).
 */
export function TestEventForm ({ endpoint, catalog, onSent, onCancel }: { endpoint: { id: string, url: string, eventTypes: string[] }, catalog: EventTypeItem[], onSent: (messageId: string) => void, onCancel?: () => void }) {
  const choices = catalog.filter((t) => !t.deprecated && (endpoint.eventTypes.length === 0 || endpoint.eventTypes.includes(t.name)))
  const [type, setType] = useState(choices[0]?.name ?? PLAIN)
  const [data, setData] = useState(() => sample(catalog, type))
  const [error, setError] = useState<Error | null>(null)
  const pick = (next: string): void => { setType(next); setData(sample(catalog, next)) }
  const send = (e: Event): void => {
    e.preventDefault()
    setError(null)
    let parsed: unknown
    try { parsed = JSON.parse(data) } catch (err) { setError(new Error(`The data is not JSON: ${(err as Error).message}`)); return }
    const body = type === PLAIN ? { data: parsed } : { type, data: parsed }
    api<{ messageId: string }>('POST', `/endpoints/${encodeURIComponent(endpoint.id)}/test`, body).then(({ messageId }) => onSent(messageId), setError)
  }
  return (
    <form class='test-form' aria-label={`Test event to ${endpoint.url}`} onSubmit={send}>
      <Field label='Event type'>
        <select name='type' value={type} onChange={(e) => pick((e.target as HTMLSelectElement).value)}>
          {choices.map((t) => <option key={t.name} value={t.name}>{t.name}</option>)}
          <option value={PLAIN}>anvil.test (a plain test)</option>
        </select>
      </Field>
      <Field label='Data (JSON, made from the type’s schema)'>
        <textarea name='data' rows={Math.min(16, data.split('\n').length + 1)} spellcheck={false} value={data}
          onInput={(e) => setData((e.target as HTMLTextAreaElement).value)} />
      </Field>
      <div class='actions'>
        <button type='submit' class='primary'>Send test event</button>
        {onCancel !== undefined && <button type='button' onClick={onCancel}>Cancel</button>}
      </div>
      {error !== null && <ErrorNote error={error} />}
    </form>
  )
}
