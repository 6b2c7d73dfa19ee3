/**
 * What a service registers with Anvil's types, by module augmentation, as `@fastify/jwt`'s `FastifyJWT`:
 * `declare module '@anvil/fastify' { interface AnvilTypes { eventTypes: typeof eventTypes } }`. Then
 * `app.anvil.publish` takes only the catalog's types, each with its data's shape (a wrong field is a compile
 * error); publish still checks the data at run time.
 */
import type { EventTypeMap, TypedMessage } from './event-types.js'
import type { MessageInput, PublishOptions, PublishResult } from '../outbox/publish.js'

/** Empty until a service adds `eventTypes: typeof <its defineEventTypes(...)>`. */
export interface AnvilTypes {}

/** A message `app.anvil.publish` takes: typed by the registered catalog, any `{ type, data }` without one. */
export type CatalogMessage = AnvilTypes extends { eventTypes: { schemas: infer T extends EventTypeMap } } ? TypedMessage<T> : MessageInput

/** `app.anvil.publish`: the same publish, its message typed by the registered catalog. */
export type CatalogPublish = (message: CatalogMessage, options?: PublishOptions) => Promise<PublishResult>
