/**
 * `DELETE /subjects/:subject`, `DELETE /tenants/:tenant` and `GET /audit`: erasure by data subject and removal of a
 * tenant, for the admin token (or a console session) only: a portal token is refused by the guard (no `anvilPortal`).
 * The journal's route set offers its side through `admin.anvilErasure` (plugins/journal/admin-routes.ts).
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { Outbound } from '../../src/outbox/outbound.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { adminTokenActor, createErasureAudit, type ErasureAuditLog } from '../../src/erasure/erasure-audit.js'
import { eraseSubject, removeTenant, type Erasers } from '../../src/erasure/erasure.js'
import type { JournalErasure } from '../../src/erasure/journal-erasure.js'
import { ErasureAuditSchema, Subject, SubjectErasureSchema, TenantRemovalSchema } from '../../src/erasure/erasure-schemas.js'
import { Tenant } from '../../src/endpoints/endpoint-schemas.js'
import { errors } from '../../src/shared/errors.js'
import { PageOf, PageQuery } from './outbound-schemas.js'

/** What feature route sets add to erasure: the journal its side, `anvil serve`'s outgoing-webhook feature its outbound. */
export interface ErasureRegistry { journal?: JournalErasure, outbound?: Outbound }

declare module 'fastify' {
  interface FastifyInstance {
    anvilErasure: ErasureRegistry
  }
}

const Audited = Type.Object({ audit: ErasureAuditSchema })

/** Who asked: the admin token (a digest of it, never the token) or a console session. */
const actorOf = (request: FastifyRequest): string => {
  const header = request.headers.authorization
  return typeof header === 'string' && header.startsWith('Bearer ') ? adminTokenActor(header.slice(7)) : 'console'
}

export function erasureRoutes (registry: ErasureRegistry, outbound: Outbound | undefined): FastifyPluginAsync {
  return async function erasure (admin: FastifyInstance) {
    /** The audit lives with the outgoing webhooks' database, else with the journal's (read per request: see ErasureRegistry). */
    const erasers = (): Erasers => {
      const out = outbound ?? registry.outbound
      const audit: ErasureAuditLog | undefined = (out === undefined ? undefined : createErasureAudit(outboundInternals(out).database)) ?? registry.journal?.audit
      if (audit === undefined) throw new errors.NOT_FOUND('erasure needs a database: the outgoing webhooks\' or the journal\'s')
      return { audit, ...(out === undefined ? {} : { outbound: out.erasure }), ...(registry.journal === undefined ? {} : { journal: registry.journal }) }
    }

    admin.delete<{ Params: { subject: string } }>('/subjects/:subject', {
      schema: {
        tags: ['erasure'],
        params: Type.Object({ subject: Subject() }, { additionalProperties: false }),
        response: { 200: Type.Composite([SubjectErasureSchema, Audited]) }
      }
    }, async (request) => await eraseSubject(erasers(), request.params.subject, actorOf(request)))

    admin.delete<{ Params: { tenant: string } }>('/tenants/:tenant', {
      schema: {
        tags: ['erasure'],
        params: Type.Object({ tenant: Tenant() }, { additionalProperties: false }),
        response: { 200: Type.Composite([TenantRemovalSchema, Audited]) }
      }
    }, async (request) => await removeTenant(erasers(), request.params.tenant, actorOf(request)))

    admin.get<{ Querystring: { limit?: number, cursor?: string } }>('/audit', {
      schema: { tags: ['erasure'], querystring: Type.Object(PageQuery, { additionalProperties: false }), response: { 200: PageOf(ErasureAuditSchema) } }
    }, async (request) => await erasers().audit.page(request.query))
  }
}
