import { useState } from 'preact/hooks'
import { api } from '../api'
import { ErrorNote, Field } from '../components'
import { sampleWithNotes, type Sample } from '../sample-from-schema'
import type { EventTypeItem } from '../catalog'

/** Anvil's own test type, sent when no catalog type is chosen: `{ "test": true }`. */
const PLAIN = ''

const sample = (catalog: EventTypeItem[], type: string): Sample =>
  type === PLAIN ? { value: { test: true }, unsure: [] } : sampleWithNotes(catalog.find((t) => t.name === type)?.schema)
const asText = (made: Sample): string => JSON.stringify(made.value, null, 2)

/**
 * A test event to this endpoint only: a type it subscribes to, with data made from the type's schema, which can be
 * edited before it goes (`POST /endpoints/:id/test`).
 */
export function TestEventForm ({ endpoint, catalog, onSent, onCancel }: { endpoint: { id: string, url: string, eventTypes: string[] }, catalog: EventTypeItem[], onSent: (messageId: string) => void, onCancel?: () => void }) {
  const choices = catalog.filter((t) => !t.deprecated && (endpoint.eventTypes.length === 0 || endpoint.eventTypes.includes(t.name)))
  const [type, setType] = useState(choices[0]?.name ?? PLAIN)
  const [made, setMade] = useState(() => sample(catalog, type))
  const [data, setData] = useState(() => asText(made))
  const [error, setError] = useState<Error | null>(null)
  const pick = (next: string): void => {
    const fresh = sample(catalog, next)
    setType(next); setMade(fresh); setData(asText(fresh))
  }
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
      {made.unsure.length > 0 && data === asText(made) && (
        // The server checks the data against the schema as a publish is checked: this says where to edit before it refuses.
        <p class='notice' role='note' data-testid='sample-needs-editing'>
          This sample may not fit the schema of {type}: edit it before sending. Where: <span class='raw'>{made.unsure.join('; ')}</span>
        </p>
      )}
      <div class='actions'>
        <button type='submit' class='primary'>Send test event</button>
        {onCancel !== undefined && <button type='button' onClick={onCancel}>Cancel</button>}
      </div>
      {error !== null && <ErrorNote error={error} />}
    </form>
  )
}
