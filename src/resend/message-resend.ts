/**
 * Re-sending a message that ended failed, whatever failed: its dispatch (Redis refused it until its attempts
 * were used) or its deliveries (an endpoint failed every attempt). A re-send goes to the endpoints the message
 * is for (enabled and subscribed now and, once it was dispatched, already there then) that have no successful
 * delivery of it and no delivery of it in flight (its first job, its last re-send, an operator's hand retry or
 * recover), under the same `webhook-id`, as job `<message>.<endpoint>.resend`.
 * The message's row is locked while that is decided and the jobs added, so concurrent re-sends make one job per
 * endpoint: the second finds the first's job waiting.
 */
import type { Queue } from 'bullmq'
import type pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import { inTransaction, type Database } from '../db/database.js'
import type { RedisGate } from '../redis/redis-outage.js'
import { decodeCursor } from '../paging/cursor.js'
import { errors } from '../shared/errors.js'
import * as endpointsSql from '../sql/endpoints.js'
import * as outboxSql from '../sql/outbox.js'
import type { OutboxRow } from '../sql/outbox.js'
import { outboundJobId, type OutboundJobData } from '../delivery/delivery-job.js'
import { EventType, Tenant } from '../endpoints/endpoint-schemas.js'
import type { HandJobs } from './hand-jobs.js'
import type { FanOut, OutboxMessage } from '../outbox/fan-out.js'
import { toPage, type Page } from '../paging/page.js'
import { outboundPageSize } from '../paging/outbound-page-size.js'
import { traceOfRow } from '../queue/trace-context.js'

export const RESEND_SUFFIX = 'resend'
/** Job states in which a delivery may still happen. */
const IN_FLIGHT = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'])

export const MessageResendSchema = Type.Object({
  messageId: Type.String(),
  /** Before the re-send: `failed` (dispatch gave up), `dispatched`, or `pending` (dispatch on its way: nothing done). */
  status: Type.Union([Type.Literal('pending'), Type.Literal('dispatched'), Type.Literal('failed')]),
  /** Sent again (a dry run: would be). */
  endpointIds: Type.Array(Type.String()),
  /** Still queued or retrying: left to that delivery. */
  inFlight: Type.Array(Type.String()),
  /** Already delivered: never sent twice. */
  delivered: Type.Array(Type.String())
})
export type MessageResend = Static<typeof MessageResendSchema>

export const ResendFilterSchema = Type.Object({
  /** `dispatch`: messages whose dispatch gave up; `delivery`: dispatched, with an endpoint that failed and never succeeded. @defaultValue both */
  failure: Type.Optional(Type.Union([Type.Literal('dispatch'), Type.Literal('delivery')])),
  /** The message's type, as published. */
  type: Type.Optional(EventType()),
  tenant: Type.Optional(Tenant()),
  /** ISO 8601: created at or after. */
  since: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** ISO 8601: created before. */
  until: Type.Optional(Type.String({ minLength: 1, maxLength: 64 }))
}, { additionalProperties: false })
export type ResendFilter = Static<typeof ResendFilterSchema>

export interface ResendPage extends Page<MessageResend> {
  dryRun: boolean
}

export function createMessageResend (db: Database, queue: Queue<OutboundJobData>, fanOut: FanOut, redis: RedisGate, hand: HandJobs) {

  /** Redis's failures are a 503 (retry later), never a half-done re-send: the transaction rolls back. */
  async function onRedis<T> (work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (err) {
      if (redis.outage(err)) throw new errors.REDIS_UNAVAILABLE({ cause: err })
      throw err
    }
  }

  async function plan (client: pg.ClientBase, message: OutboxMessage & { dispatchedAt: Date | null }) {
    const { rows } = await client.query<{ id: string, delivered: boolean }>(endpointsSql.resendTargets(db.schema),
      [message.id, message.tenant, message.publicType, message.dispatchedAt])
    const delivered = rows.filter((row) => row.delivered).map((row) => row.id)
    const open = rows.filter((row) => !row.delivered).map((row) => row.id)
    // The first job, the last re-send, and any hand retry or recover of the pair (src/resend/hand-jobs.ts).
    const states = await onRedis(async () => await Promise.all(open.map(async (endpointId) => {
      const ids = [outboundJobId(message.id, endpointId), outboundJobId(message.id, endpointId, RESEND_SUFFIX), ...await hand.ids(message.id, endpointId)]
      return await Promise.all(ids.map(async (jobId) => await queue.getJobState(jobId)))
    })))
    const send: string[] = []
    const inFlight: string[] = []
    const finished: string[] = []
    open.forEach((endpointId, i) => {
      const jobStates = states[i] as string[]
      const resent = jobStates[1] as string
      if (jobStates.includes('completed')) delivered.push(endpointId)
      else if (jobStates.some((state) => IN_FLIGHT.has(state))) inFlight.push(endpointId)
      else {
        send.push(endpointId)
        if (resent !== 'unknown') finished.push(outboundJobId(message.id, endpointId, RESEND_SUFFIX))
      }
    })
    return { send, inFlight, delivered: delivered.sort(), finished }
  }

  async function resendMessage (id: string, { dryRun = false } = {}): Promise<MessageResend> {
    return await inTransaction(db.pool, async (client) => {
      const { rows } = await client.query<OutboxRow>(dryRun ? outboxSql.byId(db.schema) : outboxSql.lockById(db.schema), [id])
      const row = rows[0]
      if (row === undefined) throw new errors.NOT_FOUND(`no message ${id} in the outbox`)
      const nothing = { messageId: id, status: row.status, endpointIds: [], inFlight: [], delivered: [] }
      // An operational event is not re-sent whole (its receivers are not a tenant's subscribers); a delivery of it may be retried.
      if (row.status === 'pending' || row.public_type === null || row.operational) return nothing
      const message = { id, publicType: row.public_type, tenant: row.tenant, data: row.data, createdAt: row.created_at, dispatchedAt: row.dispatched_at, ...traceOfRow(row) }
      const { send, inFlight, delivered, finished } = await plan(client, message)
      if (!dryRun) {
        await onRedis(async () => {
          // A finished re-send job is removed so its id can be used again (BullMQ keeps the first job of an id).
          for (const jobId of finished) await queue.remove(jobId)
          if (send.length > 0) await fanOut(message, { endpointIds: send, suffix: RESEND_SUFFIX, client })
        })
        if (row.status === 'failed') await client.query(outboxSql.markResent(db.schema), [id])
      }
      return { messageId: id, status: row.status, endpointIds: send, inFlight, delivered }
    })
  }

  /** One page of the failed messages a filter matches, oldest first, each re-sent (or, in a dry run, planned) in turn. */
  async function resendMatching (filter: ResendFilter, options: { dryRun?: boolean, limit?: number, cursor?: string } = {}): Promise<ResendPage> {
    const dryRun = options.dryRun ?? false
    const limit = outboundPageSize(options.limit)
    const after = options.cursor === undefined ? [null, null] : decodeCursor(options.cursor, ['string', 'string'])
    const { rows } = await db.pool.query<{ id: string, at: string }>(outboxSql.failedPage(db.schema),
      [filter.type ?? null, filter.tenant ?? null, filter.since ?? null, filter.until ?? null, after[0], after[1], filter.failure ?? null, limit + 1])
    const page = toPage(rows, limit, (row) => [row.at, row.id], (row) => row.id)
    const items: MessageResend[] = []
    for (const id of page.items) {
      try {
        items.push(await resendMessage(id, { dryRun }))
      } catch (err) {
        // Taken by retention since the page was read: nothing to re-send.
        if ((err as { code?: string }).code !== 'ANVIL_ERR_NOT_FOUND') throw err
      }
    }
    return { dryRun, items, next: page.next }
  }

  return { resendMessage, resendMatching }
}
