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

export interface OperationalEvent {
  type: OperationalEventType
  /** The tenant it concerns; null for an endpoint without one and for inbound events. */
  tenant: string | null
  data: Record<string, unknown>
  /** A fixed id makes a second publish of the same event a no-op (the dead-letter sweep may come twice). */
  id?: string
}

/**
 * Where operational events link to, each an absolute address (a link is left out without its base: a path
 * alone is of no use in a mail or a chat): the operator's console, and the tenant portal's page.
 */
export interface OperationalLinks {
  /** The console's address, `https://anvil.example.com/admin/console/`. */
  consoleUrl?: string | undefined
  /** The portal page's address, `https://anvil.example.com/admin/portal/` (`portal.publicUrl` and the admin prefix). */
  portalUrl?: string | undefined
}

/** A link to the hash route `route` (`/endpoints/ep_…`) of the page at `base`; none without a base. */
function linkInto (base: string | undefined, route: string): string | undefined {
  return base === undefined ? undefined : `${base.endsWith('/') ? base : `${base}/`}#${route}`
}

/** A link into the console, for the operator: none without `consoleUrl`. */
export const consoleLink = (links: OperationalLinks, route: string): string | undefined => linkInto(links.consoleUrl, route)

/** An id derived from what the event is about, so the same event twice is one message. */
export function operationalId (kind: string, about: string): string {
  return `op_${kind}_${sha256Hex(about).slice(0, 40)}`
}

/** What an `endpoint.*` event names of its endpoint: a receiver reads which one without looking it up. */
export interface EndpointFacts { id: string, url: string, description: string, tenant: string | null }

/** The fields naming the endpoint an event is about, first in its `data`. */
export const endpointFields = (endpoint: EndpointFacts): Record<string, unknown> =>
  ({ endpointId: endpoint.id, endpointUrl: endpoint.url, endpointDescription: endpoint.description, tenant: endpoint.tenant })

/**
 * The `data` of an `endpoint.*` event: the endpoint, the details, and its page twice: `link` in the console for
 * the operator, `portalLink` in the portal for its tenant (src/outbox/fan-out.ts sends each receiver its own).
 */
export function endpointEvent (
  type: Extract<OperationalEventType, `endpoint.${string}`>, endpoint: EndpointFacts, links: OperationalLinks, details: Record<string, unknown>
): OperationalEvent {
  const route = `/endpoints/${encodeURIComponent(endpoint.id)}`
  const portalLink = endpoint.tenant === null ? undefined : linkInto(links.portalUrl, route)
  return { type, tenant: endpoint.tenant, data: { ...endpointFields(endpoint), ...details, link: consoleLink(links, route), portalLink } }
}

/**
 * What one receiver gets of an operational event's stored data (JSON text): an operator's endpoint its `link`
 * into the console, a tenant's endpoint its `link` into the portal (the stored `portalLink`), or none; neither
 * sees the other's.
 */
export function dataFor (data: string, operator: boolean): string {
  const { portalLink, link, ...rest } = JSON.parse(data) as Record<string, unknown>
  const own = operator ? link : portalLink
  return JSON.stringify(own === undefined ? rest : { ...rest, link: own })
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
