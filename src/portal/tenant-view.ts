import type { Delivery, MessageWithDeliveries } from '../delivery-log/delivery-schemas.js'
import type { Endpoint } from '../endpoints/endpoint-schemas.js'
import type { Outbound } from '../outbox/outbound.js'
import { errors } from '../shared/errors.js'

/** Refuses a request naming another tenant than the portal token's (`named` undefined names none). */
export function requireOwnTenant (named: string | null | undefined, tenant: string | undefined): void {
  if (tenant !== undefined && named !== undefined && named !== tenant) throw new errors.FORBIDDEN('a portal token acts on its own tenant only')
}

/**
 * The outgoing-webhook records a tenant may see: with `tenant` undefined (an operator) everything; with a
 * portal token's tenant, what belongs to another tenant (or to none) is NOT_FOUND, as if it did not exist.
 */
export function tenantView (outbound: Outbound) {
  async function endpoint (id: string, tenant: string | undefined): Promise<Endpoint> {
    const found = await outbound.endpoints.get(id)
    if (tenant !== undefined && found.tenant !== tenant) throw new errors.NOT_FOUND(`no endpoint ${id}`)
    return found
  }

  async function owns (endpointId: string, tenant: string): Promise<boolean> {
    return await endpoint(endpointId, tenant).then(() => true, (err: unknown) => {
      if (err instanceof errors.NOT_FOUND) return false
      throw err
    })
  }

  return {
    endpoint,

    async delivery (id: string, tenant: string | undefined): Promise<Delivery> {
      const found = await outbound.deliveries.get(id)
      if (tenant !== undefined && !await owns(found.endpointId, tenant)) throw new errors.NOT_FOUND(`no delivery ${id}`)
      return found
    },

    /** A message of the tenant, with its deliveries to the tenant's endpoints only. */
    async message (id: string, tenant: string | undefined): Promise<MessageWithDeliveries> {
      const found = await outbound.deliveries.message(id)
      if (tenant === undefined) return found
      if (found.tenant !== tenant) throw new errors.NOT_FOUND(`no message ${id}`)
      const own = new Set<string>()
      for (const endpointId of new Set(found.deliveries.map((delivery) => delivery.endpointId))) {
        if (await owns(endpointId, tenant)) own.add(endpointId)
      }
      return { ...found, deliveries: found.deliveries.filter((delivery) => own.has(delivery.endpointId)) }
    }
  }
}

export type TenantView = ReturnType<typeof tenantView>
