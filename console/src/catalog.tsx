// The event-type catalog's parts, shared by the console's page and the tenant portal: the list of types with their
// descriptions, a deprecated badge, and each schema as text (never markup). Data comes from GET /admin/event-types.
import { Loading, plural } from './components'
import { useApi, type Loaded } from './use-api'
import { sampleFromSchema } from './sample-from-schema'
import type { EventTypeEntry as EventTypeItem } from '../../src/catalog/event-type-entry'

/** One entry of `GET /admin/event-types`: the server's own declaration. */
export type { EventTypeEntry as EventTypeItem } from '../../src/catalog/event-type-entry'

/** The catalog, loaded from the admin API (a portal token may read it too). */
export function useEventTypes (): Loaded<{ items: EventTypeItem[] }> {
  return useApi<{ items: EventTypeItem[] }>('/event-types')
}

export function DeprecatedBadge () {
  return <span class='status tone-bad' title='Still sent, but to be moved off'>deprecated</span>
}

/** A JSON Schema as indented text in a focusable block (it scrolls when long). */
export function SchemaText ({ schema }: { schema: unknown }) {
  return <pre class='payload' data-testid='schema' tabIndex={0}>{JSON.stringify(schema, null, 2) ?? 'no schema'}</pre>
}

/** One type: its name, badge and description, and its schema and an example (made from the schema) behind disclosures. */
export function EventTypeCard ({ type, heading = 3 }: { type: EventTypeItem, heading?: 2 | 3 | 4 }) {
  const Heading = `h${heading}` as 'h3'
  return (
    <li class='event-type' data-testid='event-type'>
      <Heading><code class='id'>{type.name}</code> {type.deprecated && <DeprecatedBadge />}</Heading>
      <p class={type.description === '' ? 'muted' : undefined}>{type.description === '' ? 'No description.' : type.description}</p>
      <details>
        <summary>Schema of {type.name}</summary>
        <SchemaText schema={type.schema} />
      </details>
      <details>
        <summary>Example of {type.name}</summary>
        <pre class='payload' data-testid='example' tabIndex={0}>{JSON.stringify(sampleFromSchema(type.schema), null, 2)}</pre>
      </details>
    </li>
  )
}

/** The types, deprecated ones last within the name order the API gives. */
export function EventTypeList ({ items, heading = 3 }: { items: EventTypeItem[], heading?: 2 | 3 | 4 }) {
  const ordered = [...items.filter((t) => !t.deprecated), ...items.filter((t) => t.deprecated)]
  return <ul class='event-types'>{ordered.map((type) => <EventTypeCard key={type.name} type={type} heading={heading} />)}</ul>
}

/** The catalog loaded and listed, with its count; `empty` is what to say when it holds no type. */
export function EventTypeCatalog ({ empty = 'No event type yet.' }: { empty?: string }) {
  const catalog = useEventTypes()
  return (
    <Loading loaded={catalog} feature='outbound'>{({ items }) => (
      <>
        <h2>{plural(items.length, 'event type')}</h2>
        {items.length === 0 ? <p class='muted'>{empty}</p> : <EventTypeList items={items} />}
      </>
    )}</Loading>
  )
}
