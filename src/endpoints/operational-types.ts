/**
 * The operational event types and what each reports: no dependency, so the console and the portal's page bundle
 * them too (the portal offers a tenant's endpoints their own `endpoint.*` events to subscribe to).
 */
export const OPERATIONAL_EVENT_TYPES = ['endpoint.disabled', 'endpoint.failing', 'endpoint.recovered', 'message.exhausted', 'inbound.dead_lettered'] as const
export type OperationalEventType = typeof OPERATIONAL_EVENT_TYPES[number]

/** The types a tenant's own endpoint may subscribe to (about its tenant's endpoints only). */
export const TENANT_OPERATIONAL_TYPES: readonly string[] = ['endpoint.disabled', 'endpoint.failing', 'endpoint.recovered']

/** One line each, as a tenant's developer reads it (docs/outgoing-webhooks.md has their data). */
export const OPERATIONAL_EVENT_DESCRIPTIONS: Record<OperationalEventType, string> = {
  'endpoint.disabled': 'One of your endpoints was disabled: it answered 410 Gone, or only failed for days.',
  'endpoint.failing': 'One of your endpoints keeps failing: its deliveries are paused and retried.',
  'endpoint.recovered': 'One of your endpoints took a delivery again after failing.',
  'message.exhausted': 'A message\'s attempts to an endpoint ran out.',
  'inbound.dead_lettered': 'An inbound event ended in the dead letters.'
}
