import { randomBytes } from 'node:crypto'
import type { Queue } from 'bullmq'
import { inTransaction, type Database } from '../db/database.js'
import * as sql from '../sql/outbox.js'
import type { OutboxRow } from '../sql/outbox.js'
import type { RedisClient } from '../redis/connect.js'
import type { RedisGate } from '../redis/redis-outage.js'
import { errors } from '../shared/errors.js'
import type { DeliveryLog } from '../delivery-log/delivery-log.js'
import type { EndpointStore } from '../endpoints/endpoint-store.js'
import type { FanOut } from '../outbox/fan-out.js'
import { outboundJobId, type OutboundJobData } from '../delivery/delivery-job.js'
import { handDedupeId, handJobs } from './hand-jobs.js'
import { newId } from '../outbox/ids.js'
import { createMessageResend, type MessageResend, type ResendFilter, type ResendPage } from './message-resend.js'
import { serializeData } from '../outbox/publish.js'
import { OPERATIONAL_EVENT_TYPES } from '../endpoints/operational-types.js'
import { traceOfRow } from '../queue/trace-context.js'

/** The one entry of src/resend/: its schemas and types are taken from here. */
export { MessageResendSchema, ResendFilterSchema, type MessageResend, type ResendFilter, type ResendPage } from './message-resend.js'
/** The ids a pair's jobs may have besides its first try's: erasure removes them all (src/erasure/). */
export { RESEND_SUFFIX } from './message-resend.js'
export { handJobs, type HandJobs } from './hand-jobs.js'

export const TEST_EVENT_TYPE = 'anvil.test'

export interface ResendResult {
  messageId: string
  endpointId: string
  jobId: string
  /** A hand retry or recover of the pair was already queued (waiting, retrying or running): `jobId` is that one, and nothing was added. */
  alreadyQueued: boolean
}

/**
 * What an operator sends again by hand: one delivery, what an endpoint failed since a time, a test event, and a
 * message that ended failed (src/resend/message-resend.ts), alone or by filter. The one entry of src/resend/.
 */
export interface Resender {
  /** A failed message to the endpoints that have not had it (none twice); `dryRun` says what it would do. */
  message (id: string, options?: { dryRun?: boolean }): Promise<MessageResend>
  /** A page of the failed messages a filter matches, each re-sent as `message` does. */
  matching (filter: ResendFilter, options?: { dryRun?: boolean, limit?: number, cursor?: string }): Promise<ResendPage>
  /**
   * One delivery sent again, as a new job (or the pair's hand job already queued). `known`: the delivery as the
   * caller already read it (the portal's check of its tenant), not read again.
   */
  retry (deliveryId: string, known?: { messageId: string, endpointId: string }): Promise<ResendResult>
  /** What an endpoint failed since a time and has not succeeded with since, sent again. */
  recover (endpointId: string, since: string): Promise<{ messageIds: string[] }>
  /**
   * A message of its own (kept in the outbox, so its deliveries can be looked up), sent to one endpoint. It obeys a
   * publish's rules: a type the endpoint takes, in a strict catalog (or one of Anvil's own), data that fits the
   * type's schema; and at most `maxBytes` of JSON (a tenant's cap, under `maxPayloadBytes`).
   */
  sendTest (endpointId: string, input?: TestEventInput, options?: { maxBytes?: number }): Promise<{ messageId: string }>
}

/** A fresh job id for an operator's re-send: each one is a new delivery, never deduplicated against the first. */
const resendSuffix = (kind: 'retry' | 'recover'): string => `${kind}-${randomBytes(6).toString('hex')}`

export interface ResenderDeps {
  db: Database
  queue: Queue<OutboundJobData>
  fanOut: FanOut
  log: DeliveryLog
  endpoints: EndpointStore
  redis: RedisGate
  /** The queue's Redis connection, for the hand jobs' index (src/resend/hand-jobs.ts). */
  client: RedisClient
  maxPayloadBytes: number
  /** The catalog's check of a message's data (src/catalog/event-types.ts); `strict` false lets a type it lacks pass. */
  checkData: (type: string, json: string, strict?: boolean) => Promise<void>
}

/** Anvil's own types, which a strict catalog need not hold: a test event may be of them. */
const OWN_TYPES: ReadonlySet<string> = new Set([TEST_EVENT_TYPE, ...OPERATIONAL_EVENT_TYPES])

export interface TestEventInput {
  /** @defaultValue `'anvil.test'` */
  type?: string
  /** @defaultValue `{ "test": true }` */
  data?: unknown
}

export function createResender ({ db, queue, fanOut, log, endpoints, redis, client: redisClient, maxPayloadBytes, checkData }: ResenderDeps): Resender {
  const hand = handJobs(redisClient, queue)
  const { resendMessage, resendMatching } = createMessageResend(db, queue, fanOut, redis, hand)

  async function resend (messageId: string, endpointId: string, kind: 'retry' | 'recover'): Promise<ResendResult> {
    const deduplicationId = handDedupeId(messageId, endpointId)
    // One hand job of a pair at a time: a storm of requests reads Redis, and neither locks the message nor adds a job.
    const queued = await queue.getDeduplicationJobId(deduplicationId)
    if (queued !== null) return { messageId, endpointId, jobId: queued, alreadyQueued: true }
    const suffix = resendSuffix(kind)
    const fresh = outboundJobId(messageId, endpointId, suffix)
    // Under the message's lock, as a message re-send decides, and listed first: that re-send sees this job in flight.
    const [jobId] = await inTransaction(db.pool, async (client) => {
      const { rows } = await client.query<OutboxRow>(sql.lockById(db.schema), [messageId])
      const row = rows[0]
      if (row === undefined) throw new errors.NOT_FOUND(`no message ${messageId} in the outbox`)
      await hand.note(messageId, endpointId, fresh)
      const message = { id: row.id, publicType: row.public_type, tenant: row.tenant, data: row.data, createdAt: row.created_at, operational: row.operational, ...traceOfRow(row) }
      return await fanOut(message, { endpointId, suffix, deduplicationId, client })
    })
    if (jobId === undefined) throw new errors.NOT_FOUND(`no endpoint ${endpointId}, or message ${messageId} has no public type`)
    // Requests that passed the read above together: the deduplicated add answered the one job they share.
    if (jobId !== fresh) await hand.forget(messageId, endpointId, fresh)
    return { messageId, endpointId, jobId, alreadyQueued: jobId !== fresh }
  }

  return {
    message: resendMessage,
    matching: resendMatching,

    async retry (deliveryId: string, known?: { messageId: string, endpointId: string }): Promise<ResendResult> {
      const delivery = known ?? await log.get(deliveryId)
      return await resend(delivery.messageId, delivery.endpointId, 'retry')
    },

    async recover (endpointId: string, since: string): Promise<{ messageIds: string[] }> {
      await endpoints.get(endpointId)
      const messageIds = await log.failedSince(endpointId, since)
      for (const messageId of messageIds) await resend(messageId, endpointId, 'recover')
      return { messageIds }
    },

    async sendTest (endpointId, input = {}, { maxBytes = maxPayloadBytes } = {}) {
      const endpoint = await endpoints.get(endpointId)
      const type = input.type ?? TEST_EVENT_TYPE
      const data = serializeData(input.data ?? { test: true }, Math.min(maxBytes, maxPayloadBytes))
      if (type !== TEST_EVENT_TYPE && endpoint.eventTypes.length > 0 && !endpoint.eventTypes.includes(type)) {
        throw new errors.INVALID_MESSAGE(`endpoint ${endpointId} does not take type ${type} (it subscribes to ${endpoint.eventTypes.join(', ')})`)
      }
      await checkData(type, data, OWN_TYPES.has(type) ? false : undefined)
      const id = newId('msg')
      const { rows } = await db.pool.query<{ created_at: Date }>(sql.insertTest(db.schema), [id, type, endpoint.tenant, data])
      await fanOut({ id, publicType: type, tenant: endpoint.tenant, data, createdAt: rows[0]?.created_at ?? new Date() }, { endpointId })
      return { messageId: id }
    }
  }
}
