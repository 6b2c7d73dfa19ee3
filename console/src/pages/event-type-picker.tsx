import { plural } from '../components'
import { DeprecatedBadge, type EventTypeItem } from '../catalog'
import { OPERATIONAL_EVENT_DESCRIPTIONS, TENANT_OPERATIONAL_TYPES } from '../../../src/endpoints/operational-types'

/** What the picker lists of a type. */
type Choice = Pick<EventTypeItem, 'name' | 'description' | 'deprecated'>

/** Anvil's own events about the tenant's endpoints, which an endpoint subscribes to by name (never by default). */
const OPERATIONAL: Choice[] = TENANT_OPERATIONAL_TYPES.map((name) =>
  ({ name, description: OPERATIONAL_EVENT_DESCRIPTIONS[name as keyof typeof OPERATIONAL_EVENT_DESCRIPTIONS], deprecated: false }))

function Choices ({ items, value, onToggle }: { items: Choice[], value: string[], onToggle: (name: string, on: boolean) => void }) {
  return (
    <ul>{items.map((t) => (
      <li key={t.name}>
        <label>
          <input type='checkbox' name='eventTypes' value={t.name} checked={value.includes(t.name)} onChange={(e) => onToggle(t.name, (e.target as HTMLInputElement).checked)} />
          {' '}<code>{t.name}</code>{t.deprecated && <> <DeprecatedBadge /></>}
          {t.description !== '' && <span class='muted'> {t.description}</span>}
        </label>
      </li>
    ))}</ul>
  )
}

/**
 * Subscriptions picked from the catalog: a checkbox per type, none checked for every type of the catalog; then
 * Anvil's events about the tenant's own endpoints. A type the endpoint has that neither lists stays, checked,
 * so it can be taken away.
 */
export function EventTypePicker ({ catalog, value, onChange, legend }: { catalog: EventTypeItem[], value: string[], onChange: (types: string[]) => void, legend: string }) {
  const types = catalog.filter((t) => !TENANT_OPERATIONAL_TYPES.includes(t.name))
  const listed = new Set([...types, ...OPERATIONAL].map((t) => t.name))
  const others = value.filter((name) => !listed.has(name)).map((name) => ({ name, description: 'not in the catalog', deprecated: false }))
  const toggle = (name: string, on: boolean): void => onChange(on ? [...value, name] : value.filter((t) => t !== name))
  return (
    <fieldset class='types'>
      <legend>{legend}</legend>
      {types.length === 0 && <p class='muted'>The catalog lists no event types.</p>}
      <Choices items={[...types, ...others]} value={value} onToggle={toggle} />
      <p class='muted'>{value.length === 0 ? 'None checked: every event type (but those about your endpoints below).' : `${plural(value.length, 'type')} checked: only these.`}</p>
      <p class='sub'>About your endpoints:</p>
      <Choices items={OPERATIONAL} value={value} onToggle={toggle} />
    </fieldset>
  )
}
