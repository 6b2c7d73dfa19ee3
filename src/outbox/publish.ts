import type pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import type { Database } from '../db/database.js'
import { databaseErrorKind } from '../db/database-errors.js'
import * as sql from '../sql/outbox.js'
import { errors } from '../shared/errors.js'
import { compileCheck } from '../shared/validate.js'
import { EventType, Tenant } from '../endpoints/endpoint-schemas.js'
import { Subject } from '../erasure/erasure-schemas.js'
import { MESSAGE_ID_PATTERN, newId } from './ids.js'
import { outboxChannels } from './outbox-channels.js'
import type { Telemetry } from '../queue/telemetry.js'
import { SpanKind, startSpan, traceContextOf } from '../queue/trace-context.js'

export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024
/** An ordering key: an object's id, say; any text PostgreSQL stores, short enough for an index. */
const ORDERING_KEY_PATTERN = '^[^\\u0000-\\u001F\\u007F]{1,256}$'

export const MessageInputSchema = Type.Object({
  /** The internal event name; the event map, when there is one, gives its public name. */
  type: EventType(),
  /** Anything JSON can hold. */
  data: Type.Unknown(),
  /** Only this tenant's endpoints receive it. @defaultValue none (endpoints without a tenant) */
  tenant: Type.Optional(Tenant()),
  /** The message id; the same id twice is one message. @defaultValue a new `msg_…` id */
  id: Type.Optional(Type.String({ pattern: MESSAGE_ID_PATTERN, errorMessage: 'must be 1 to 128 of A-Z a-z 0-9 _ . ~ -' })),
  /**
   * The messages of one key (of one tenant) reach each endpoint one after another, in publish order, each once the one
   * before it there succeeded or was given up (docs/outgoing-webhooks.md, "Order"). @defaultValue none: no order
   */
  orderingKey: Type.Optional(Type.String({ pattern: ORDERING_KEY_PATTERN, errorMessage: 'must be 1 to 256 characters, none of them a control character' })),
  /**
   * The data subject it is about (a user's id, say): `DELETE /admin/subjects/:subject` erases it with its delivery
   * log's bodies and its jobs (docs/outgoing-webhooks.md, "Erasure"). @defaultValue none
   */
  subject: Type.Optional(Subject())
}, { additionalProperties: false })
export type MessageInput = Static<typeof MessageInputSchema>

export interface PublishOptions {
  /** The caller's client inside its transaction: the message is written (and announced) only if it commits. */
  client?: pg.ClientBase | pg.Pool
  /**
   * The W3C trace the message belongs to, as a caller's `traceparent` header gave it: each delivery carries it to the
   * receiver. A malformed one is ignored, as the spec has receivers do. With `telemetry`, the active span is used
   * instead when there is one (docs/outgoing-webhooks.md, "Trace context"). @defaultValue the active span's, or none
   */
  traceparent?: string
  /** Its `tracestate`, kept only beside a valid traceparent. @defaultValue none */
  tracestate?: string
}

export interface PublishResult {
  messageId: string
}

export interface PublisherOptions {
  maxPayloadBytes: number
  /** At most one NOTIFY per this many ms from this publisher; 0 sends one with every message. */
  notifyIntervalMs: number
  /** Internal name → public name; without a map every name is public as it is. */
  eventMap?: Readonly<Record<string, string>>
  /** The event-type catalog's check of a message's data, as the JSON text it is sent as (src/catalog/event-types.ts). */
  checkData?: (type: string, json: string, client: pg.ClientBase | pg.Pool) => Promise<void>
  /** A `publish <type>` span per message, in the active trace (or the one given), whose context the message keeps. */
  telemetry?: Telemetry
}

export type Publish = (message: MessageInput, options?: PublishOptions) => Promise<PublishResult>

/** The NOTIFY channel dispatchers of one schema listen on. PostgreSQL cuts names at 63 bytes. */
export function outboxChannel (schema: string): string {
  return `anvil_outbox_${schema}`.slice(0, 63)
}

const checkMessage = compileCheck(MessageInputSchema)

/** A schema nobody migrated is said with what to run, not as PostgreSQL's `relation … does not exist`. */
function unmigrated (err: unknown): never {
  if (databaseErrorKind(err) === 'unmigrated') throw new errors.NOT_MIGRATED((err as Error).message, { cause: err })
  throw err
}

/** The data as the JSON every delivery will send, or a clear refusal. */
export function serializeData (data: unknown, maxBytes: number): string {
  let json: string | undefined
  try {
    json = JSON.stringify(data)
  } catch (err) {
    throw new errors.INVALID_MESSAGE(`data is not JSON: ${(err as Error).message}`)
  }
  if (json === undefined) throw new errors.INVALID_MESSAGE(`data is not JSON: ${typeof data}`)
  const size = Buffer.byteLength(json, 'utf8')
  if (size > maxBytes) throw new errors.PAYLOAD_TOO_LARGE(size, maxBytes)
  return json
}

/**
 * Writes a message to the outbox, in the caller's transaction when a client is given. The NOTIFY is part of
 * the same statement, so PostgreSQL sends it on commit and never for a rollback. PostgreSQL serializes the
 * commits of transactions that NOTIFY, so a busy publisher sends one per `notifyIntervalMs`: the dispatcher
 * it wakes keeps polling while it finds work, and its poll is the backstop for a notifying transaction that
 * rolled back.
 */
export function createPublisher (db: Database, options: PublisherOptions): Publish {
  const channel = outboxChannel(db.schema)
  const withNotify = sql.publishAndNotify(db.schema)
  const withoutNotify = sql.publish(db.schema)
  const keyed = sql.publishKeyed(db.schema)
  let notifiedAt = -Infinity
  // Named, so each connection parses and plans them once (they then cost less than an unprepared bare INSERT).
  return async (message, { client = db.pool, traceparent, tracestate } = {}) => {
    const problem = checkMessage(message)
    if (problem !== undefined) throw new errors.INVALID_MESSAGE(problem)
    const data = serializeData(message.data, options.maxPayloadBytes)
    await options.checkData?.(message.type, data, client).catch(unmigrated)
    const publicType = options.eventMap === undefined ? message.type : Object.hasOwn(options.eventMap, message.type) ? options.eventMap[message.type] ?? null : null
    const id = message.id ?? newId('msg')
    // An event with no public name is kept for the record, already done: nothing to deliver.
    const given = traceparent === undefined ? undefined : traceContextOf(traceparent, tracestate)
    const span = options.telemetry === undefined
      ? undefined
      : startSpan(options.telemetry, `publish ${publicType ?? message.type}`, SpanKind.PRODUCER, given, { 'anvil.message.id': id, 'anvil.event.type': message.type })
    // The publish span's context when traced, so the dispatch and the attempts are its children.
    const trace = span?.context ?? given
    const values = [id, message.type, publicType, message.tenant ?? null, data, publicType === null ? 'dispatched' : 'pending', trace?.traceparent ?? null, trace?.tracestate ?? null,
      message.subject ?? null]
    const now = performance.now()
    const notify = publicType !== null && now - notifiedAt >= options.notifyIntervalMs
    if (notify) notifiedAt = now
    const { rows } = await client.query<{ id: string }>(message.orderingKey !== undefined
      ? { name: `anvil_publish_keyed_${db.schema}`, text: keyed, values: [...values, message.orderingKey, notify ? channel : null] }
      : notify
        ? { name: `anvil_publish_notify_${db.schema}`, text: withNotify, values: [...values, channel] }
        : { name: `anvil_publish_${db.schema}`, text: withoutNotify, values }).then((answer) => {
      span?.end()
      return answer
    }, (err: Error) => {
      span?.end(err)
      return unmigrated(err)
    })
    // A row back means a new message (a repeated id, or an undeliverable event, gives none).
    if (rows.length > 0 && outboxChannels.published.hasSubscribers) {
      outboxChannels.published.publish({ eventType: publicType ?? message.type, tenant: message.tenant ?? null })
    }
    return { messageId: id }
  }
}
