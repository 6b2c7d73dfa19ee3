import { plural } from '../components'
import type { Scope } from '../scope'
import { DeprecatedBadge, type EventTypeItem } from '../catalog'
import { OPERATIONAL_EVENT_DESCRIPTIONS, OPERATIONAL_EVENT_TYPES, TENANT_OPERATIONAL_TYPES } from '../../../src/endpoints/operational-types'

/** What the picker lists of a type. */
type Choice = Pick<EventTypeItem, 'name' | 'description' | 'deprecated'>

/** Anvil's own events about the tenant's endpoints, which an endpoint subscribes to by name (never by default). */
const operational = (names: readonly string[]): Choice[] => names.map((name) =>
  ({ name, description: OPERATIONAL_EVENT_DESCRIPTIONS[name as keyof typeof OPERATIONAL_EVENT_DESCRIPTIONS], deprecated: false }))
const TENANT_OPERATIONAL = operational(TENANT_OPERATIONAL_TYPES)
/** What an operator's operational endpoint may take: every operational type, of every tenant. */
const EVERY_OPERATIONAL = operational(OPERATIONAL_EVENT_TYPES)

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
 * The heading of the events about a tenant's own endpoints: the portal's tenant reads "your"; an operator sees
 * them only for an endpoint with a tenant (for one without, no such event is sent).
 */
export function aboutTenant (scope: Scope, tenant: string | null): string | null {
  if (scope === 'tenant') return 'About your endpoints:'
  return tenant === null ? null : `About tenant ${tenant}'s endpoints:`
}

/**
 * Subscriptions picked from the catalog: a checkbox per type, none checked for every type of the catalog; then,
 * under `about` (none for an endpoint without a tenant), Anvil's events about the tenant's own endpoints. A type
 * the endpoint has that neither lists stays, checked, so it can be taken away. An operational endpoint picks from
 * the operational types alone (none checked: all of them).
 */
export function EventTypePicker ({ catalog, value, onChange, legend, about, operational: forOperator = false }: {
  catalog: EventTypeItem[], value: string[], onChange: (types: string[]) => void, legend: string, about: string | null, operational?: boolean
}) {
  const types = forOperator ? EVERY_OPERATIONAL : catalog.filter((t) => !TENANT_OPERATIONAL_TYPES.includes(t.name))
  const extra = forOperator || about === null ? [] : TENANT_OPERATIONAL
  const listed = new Set([...types, ...extra].map((t) => t.name))
  const others = value.filter((name) => !listed.has(name)).map((name) => ({ name, description: 'not in the catalog', deprecated: false }))
  const toggle = (name: string, on: boolean): void => onChange(on ? [...value, name] : value.filter((t) => t !== name))
  const every = forOperator ? 'every operational event' : `every event type${extra.length > 0 ? ' (but those about the endpoints below)' : ''}`
  return (
    <fieldset class='types'>
      <legend>{legend}</legend>
      {types.length === 0 && <p class='muted'>The catalog lists no event types.</p>}
      <Choices items={[...types, ...others]} value={value} onToggle={toggle} />
      <p class='muted'>{value.length === 0 ? `None checked: ${every}.` : `${plural(value.length, 'type')} checked: only these.`}</p>
      {extra.length > 0 && <><p class='sub'>{about}</p><Choices items={extra} value={value} onToggle={toggle} /></>}
    </fieldset>
  )
}
