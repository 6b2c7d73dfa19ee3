import { useState } from 'preact/hooks'
import { api } from '../api'
import { ErrorNote, Field } from '../components'
import { useCanWrite } from '../scope'
import type { Endpoint } from './endpoint-types'

/** Rows of name and value, as the create form takes custom headers; empty names are left out. */
export type HeaderRow = { name: string, value: string }

export const headersOf = (rows: HeaderRow[]): Record<string, string> =>
  Object.fromEntries(rows.filter((r) => r.name.trim() !== '').map((r) => [r.name.trim(), r.value]))

/** The create form's custom headers: a row per header, added one at a time. */
export function HeaderRows ({ rows, onChange }: { rows: HeaderRow[], onChange: (rows: HeaderRow[]) => void }) {
  const set = (i: number, change: Partial<HeaderRow>): void => onChange(rows.map((row, j) => j === i ? { ...row, ...change } : row))
  return (
    <fieldset class='header-rows'>
      <legend>Custom headers (optional): sent with each delivery, values kept secret</legend>
      {rows.map((row, i) => (
        <div class='inline' key={i}>
          <Field label='Header name'><input name={`header-name-${i}`} value={row.name} placeholder='authorization' onInput={(e) => set(i, { name: (e.target as HTMLInputElement).value })} /></Field>
          <Field label='Value'><input name={`header-value-${i}`} type='password' autocomplete='off' value={row.value} onInput={(e) => set(i, { value: (e.target as HTMLInputElement).value })} /></Field>
          <button type='button' onClick={() => onChange(rows.filter((_, j) => j !== i))}>Remove</button>
        </div>
      ))}
      <button type='button' onClick={() => onChange([...rows, { name: '', value: '' }])}>Add a header</button>
    </fieldset>
  )
}

/**
 * The endpoint's custom headers: their names, never their values (the API does not answer them); a header is set
 * (added, or its value replaced) or removed on its own.
 */
export function HeadersSection ({ endpoint, onChanged }: { endpoint: Endpoint, onChanged: () => void }) {
  const canWrite = useCanWrite()
  const [name, setName] = useState('')
  const [value, setValue] = useState('')
  const [note, setNote] = useState<string | null>(null)
  const [error, setError] = useState<Error | null>(null)
  const patch = (headers: Record<string, string | null>, done: string): void => {
    setNote(null); setError(null)
    api('PATCH', `/endpoints/${encodeURIComponent(endpoint.id)}`, { headers }).then(() => { setNote(done); onChanged() }, setError)
  }
  return (
    <section aria-labelledby='headers-title' class='panel'>
      <h2 id='headers-title'>Custom headers</h2>
      <p class='muted'>Sent with each delivery. Their values are kept like the signing secret: never shown again, and redacted in the delivery log.</p>
      {endpoint.headerNames.length === 0
        ? <p class='empty'>No custom header.</p>
        : (
          <ul data-testid='header-names'>
            {endpoint.headerNames.map((header) => (
              <li key={header} class='actions'><code>{header}</code><code class='masked' aria-label='Hidden value'>••••••••</code>
                {canWrite && <button type='button' onClick={() => patch({ [header]: null }, `Header ${header} removed`)}>Remove</button>}
              </li>
            ))}
          </ul>
          )}
      {canWrite && (
        <form class='inline' aria-label='Set a header' onSubmit={(e) => { e.preventDefault(); patch({ [name.trim()]: value }, `Header ${name.trim().toLowerCase()} saved`); setValue('') }}>
          <Field label='Header name'><input name='header-name' required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} /></Field>
          <Field label='Value'><input name='header-value' type='password' autocomplete='off' value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} /></Field>
          <button type='submit'>Set header</button>
        </form>
      )}
      {note !== null && <p role='status' class='ok'>{note}</p>}
      {error !== null && <ErrorNote error={error} />}
    </section>
  )
}
