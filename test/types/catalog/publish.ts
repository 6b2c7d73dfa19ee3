/**
 * `app.anvil.publish` typed by the event-type catalog a service registers in `AnvilTypes`, by module augmentation
 * through the package's own name: a type the catalog lacks, a wrong or missing field, and an unknown field are
 * compile errors. A project of its own (tsconfig.json here): the augmentation types every publish of its program,
 * and test/types/outbound.ts checks publish without one.
 */
import Fastify from 'fastify'
import pg from 'pg'
import { Type } from '@sinclair/typebox'
import { anvilOutbound, defineEventTypes, type CatalogMessage, type PublishResult } from '@anvil/fastify'
import { expectType } from '../assert.js'

const eventTypes = defineEventTypes({
  'invoice.paid': Type.Object({ amount: Type.Integer(), currency: Type.String(), paidAt: Type.Optional(Type.String({ format: 'date-time' })) }),
  'user.deleted': Type.Object({ userId: Type.String() })
})

declare module '@anvil/fastify' {
  interface AnvilTypes {
    eventTypes: typeof eventTypes
  }
}

const app = Fastify()
await app.register(anvilOutbound, { database: 'postgres://localhost/app', eventTypes, strict: true })

expectType<Promise<PublishResult>>()(app.anvil.publish({ type: 'invoice.paid', data: { amount: 100, currency: 'eur' } }))
const client = await new pg.Pool().connect()
expectType<Promise<PublishResult>>()(app.anvil.publish({ type: 'user.deleted', data: { userId: 'u_1' }, tenant: 'acme', id: 'm1' }, { client }))
expectType<{ type: 'invoice.paid', data: { amount: number, currency: string, paidAt?: string }, tenant?: string, id?: string } | { type: 'user.deleted', data: { userId: string }, tenant?: string, id?: string }>()(
  {} as CatalogMessage
)

// @ts-expect-error amount is a number
await app.anvil.publish({ type: 'invoice.paid', data: { amount: '100', currency: 'eur' } })
// @ts-expect-error currency is required
await app.anvil.publish({ type: 'invoice.paid', data: { amount: 100 } })
// @ts-expect-error a field the schema does not have
await app.anvil.publish({ type: 'invoice.paid', data: { amount: 100, currency: 'eur', note: 'x' } })
// @ts-expect-error the data of another type
await app.anvil.publish({ type: 'user.deleted', data: { amount: 100, currency: 'eur' } })
// @ts-expect-error a type the catalog does not hold
await app.anvil.publish({ type: 'invoice.voided', data: { amount: 100, currency: 'eur' } })
// @ts-expect-error data is required
await app.anvil.publish({ type: 'user.deleted' })

// Types stored through the admin API only are published untyped by the service's own publish.
await app.anvilOutbound.publish({ type: 'stored.elsewhere', data: { anything: true } })
// The typed wrapper still works on either publish, and agrees.
await eventTypes.typed(app.anvilOutbound.publish)({ type: 'user.deleted', data: { userId: 'u_2' } })
await eventTypes.typed(app.anvil.publish)({ type: 'user.deleted', data: { userId: 'u_3' } })
// @ts-expect-error typed by the same catalog
await eventTypes.typed(app.anvilOutbound.publish)({ type: 'user.deleted', data: { userId: 3 } })
