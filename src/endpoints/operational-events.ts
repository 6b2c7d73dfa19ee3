/**
 * Operational events: what Anvil says about its own delivery trouble, written to the outbox (in the transaction
 * of the change they report, where there is one) and delivered as any message, to the operational endpoints
 * and to tenants' endpoints subscribed to their own `endpoint.*` events by name.
 */
import type pg from 'pg'
import { sha256Hex } from '../signing/crypto.js'
import * as sql from '../sql/outbox.js'
import { newId } from '../outbox/ids.js'
import { outboxChannel } from '../outbox/publish.js'
import { TENANT_OPERATIONAL_TYPES, type OperationalEventType } from './operational-types.js'

export { OPERATIONAL_EVENT_TYPES, TENANT_OPERATIONAL_TYPES, type OperationalEventType } from './operational-types.js'

/** Where the console is served when no base URL is given: links are then this path, relative to Anvil's origin. */
export const DEFAULT_CONSOLE_PATH = '/admin/console/'

export interface OperationalEvent {
  type: OperationalEventType
  /** The tenant it concerns; null for an endpoint without one and for inbound events. */
  tenant: string | null
  data: Record<string, unknown>
  /** A fixed id makes a second publish of the same event a no-op (the dead-letter sweep may come twice). */
  id?: string
}

/** A link into the console's hash route `route` (`/deliveries?endpoint=ep_…`): the base URL given, else its path. */
export function consoleLink (consoleUrl: string | undefined, route: string): string {
  const base = consoleUrl ?? DEFAULT_CONSOLE_PATH
  return `${base.endsWith('/') ? base : `${base}/`}#${route}`
}

/** An id derived from what the event is about, so the same event twice is one message. */
export function operationalId (kind: string, about: string): string {
  return `op_${kind}_${sha256Hex(about).slice(0, 40)}`
}

/** The `data` of an `endpoint.*` event: the endpoint, its tenant, the link to its deliveries, and the details. */
export function endpointEvent (
  type: Extract<OperationalEventType, `endpoint.${string}`>, endpointId: string, tenant: string | null, consoleUrl: string | undefined,
  details: Record<string, unknown>
): OperationalEvent {
  const link = consoleLink(consoleUrl, `/deliveries?endpoint=${encodeURIComponent(endpointId)}`)
  return { type, tenant, data: { endpointId, tenant, ...details, link } }
}

/**
 * Writes the event to the outbox on `client` (the caller's transaction), when an enabled endpoint receives it;
 * the NOTIFY goes on commit. True when a message was written.
 */
export async function publishOperational (client: pg.ClientBase | pg.Pool, schema: string, event: OperationalEvent): Promise<boolean> {
  const id = event.id ?? newId('op')
  const { rows } = await client.query(sql.publishOperational(schema),
    [id, event.type, event.tenant, JSON.stringify(event.data), TENANT_OPERATIONAL_TYPES.includes(event.type), outboxChannel(schema)])
  return rows.length > 0
}
