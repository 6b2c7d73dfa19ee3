/**
 * An entry of the event-type catalog as `GET /admin/event-types` lists it: no imports, so the console
 * (console/src) takes this very declaration instead of copying it.
 */
export interface EventTypeEntry {
  name: string
  description: string
  /** The JSON Schema the data of the type's messages must fit. */
  schema: unknown
  deprecated: boolean
  /** `code`: given by `defineEventTypes` (read-only through the API); `api`: stored through the admin API. */
  source: 'code' | 'api'
  updatedAt: string | null
}
