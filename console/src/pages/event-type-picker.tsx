import { plural } from '../components'

/** An event type of the catalog (`GET /admin/event-types`). */
export interface EventTypeEntry { name: string, description: string, schema: unknown, deprecated: boolean }

/**
 * Subscriptions picked from the catalog: a checkbox per type, none checked for every type. A type the endpoint
 * has that the catalog no longer lists stays, checked, so it can be taken away.
 */
export function EventTypePicker ({ catalog, value, onChange, legend }: { catalog: EventTypeEntry[], value: string[], onChange: (types: string[]) => void, legend: string }) {
  const listed = new Set(catalog.map((t) => t.name))
  const entries = [...catalog, ...value.filter((name) => !listed.has(name)).map((name) => ({ name, description: 'not in the catalog', schema: {}, deprecated: false }))]
  const toggle = (name: string, on: boolean): void => onChange(on ? [...value, name] : value.filter((t) => t !== name))
  return (
    <fieldset class='types'>
      <legend>{legend}</legend>
      {entries.length === 0 && <p class='muted'>The catalog lists no event types.</p>}
      <ul>{entries.map((t) => (
        <li key={t.name}>
          <label>
            <input type='checkbox' name='eventTypes' value={t.name} checked={value.includes(t.name)} onChange={(e) => toggle(t.name, (e.target as HTMLInputElement).checked)} />
            {' '}<code>{t.name}</code>{t.deprecated && <span class='status tone-busy'>deprecated</span>}
            {t.description !== '' && <span class='muted'> {t.description}</span>}
          </label>
        </li>
      ))}</ul>
      <p class='muted'>{value.length === 0 ? 'None checked: every event type.' : `${plural(value.length, 'type')} checked.`}</p>
    </fieldset>
  )
}
