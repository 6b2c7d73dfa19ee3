/**
 * Erasure on the outgoing side: a subject's messages, or a tenant's, taken a batch at a time. Each batch is one
 * short transaction that locks its outbox rows, removes their delivery jobs from Redis (before the rows go, so a
 * Redis failure rolls the batch back and a second call finds it again), lets the next keyed message of each key go,
 * then erases the delivery log's bodies (subject) or deletes it (tenant), and deletes the messages.
 */
import type { Queue } from 'bullmq'
import type pg from 'pg'
import { inTransaction, type Database } from '../db/database.js'
import { outboundJobId, type OutboundJobData } from '../delivery/delivery-job.js'
import type { RedisClient } from '../redis/connect.js'
import { RESEND_SUFFIX, type HandJobs } from '../resend/resender.js'
import { outboxChannel } from '../outbox/publish.js'
import * as sql from '../sql/erasure/outbound-erasure.js'
import * as outboxSql from '../sql/outbox.js'
import * as portalSql from '../sql/portal.js'
import type { SubjectErasure, TenantRemoval } from './erasure-schemas.js'

/** Messages a batch takes: its locks and its Redis round trips stay short, so publishes and deliveries go on meanwhile. */
export const DEFAULT_ERASURE_BATCH = 200

export type OutboundSubjectCounts = Pick<SubjectErasure, 'messages' | 'pendingMessages' | 'deliveries' | 'jobs' | 'jobsInFlight'>
export type OutboundTenantCounts = Omit<TenantRemoval, 'tenant'>

export interface OutboundErasure {
  /** Every message of `subject`: its jobs, its keyed places, its delivery log's bodies, the message. */
  subject (subject: string): Promise<OutboundSubjectCounts>
  /** Tenant `tenant`'s messages, delivery log, jobs and endpoints; its portal tokens revoked and link codes deleted. */
  tenant (tenant: string): Promise<OutboundTenantCounts>
}

interface Jobs { removed: number, inFlight: number }

export function createOutboundErasure (db: Database, queue: Queue<OutboundJobData>, redis: RedisClient, hand: HandJobs, batch = DEFAULT_ERASURE_BATCH): OutboundErasure {
  const s = db.schema

  /** Every job of the batch's pairs (first try, re-send, hand retries and recovers), removed unless it is running. */
  async function removeJobs (client: pg.ClientBase, ids: string[]): Promise<Jobs> {
    const { rows } = await client.query<{ message_id: string, endpoint_id: string }>(sql.jobPairs(s), [ids])
    const candidates = (await Promise.all(rows.map(async ({ message_id: m, endpoint_id: e }) =>
      [outboundJobId(m, e), outboundJobId(m, e, RESEND_SUFFIX), ...await hand.ids(m, e)]))).flat()
    if (candidates.length === 0) return { removed: 0, inFlight: 0 }
    // BullMQ's remove answers 1 for an id it never had: only jobs that exist are counted.
    const exists = await redis.pipeline(candidates.map((id) => ['exists', queue.toKey(id)])).exec() ?? []
    const present = candidates.filter((_id, i) => exists[i]?.[1] === 1)
    const codes = await Promise.all(present.map(async (id) => await queue.remove(id)))
    return { removed: codes.filter((code) => code === 1).length, inFlight: codes.filter((code) => code !== 1).length }
  }

  /** The keyed deliveries of the batch go, each letting its key's next message at the endpoint go (as a final outcome does). */
  async function releaseKeyed (client: pg.ClientBase, ids: string[]): Promise<void> {
    const { rows } = await client.query<{ message_id: string, endpoint_id: string, ordering_key: string }>(sql.orderedOf(s), [ids])
    for (const row of rows) {
      await client.query(outboxSql.lockOrderedPair(), [row.endpoint_id, row.ordering_key])
      await client.query(outboxSql.releaseOrdered(s), [row.message_id, row.endpoint_id, row.ordering_key, outboxChannel(s)])
    }
  }

  /** Runs `step` on batches of the messages `select` takes until one comes back short. */
  async function inBatches (select: string, key: string, step: (client: pg.ClientBase, ids: string[], pending: number) => Promise<void>): Promise<void> {
    for (;;) {
      const taken = await inTransaction(db.pool, async (client) => {
        const { rows } = await client.query<{ id: string, status: string }>(select, [key, batch])
        if (rows.length > 0) await step(client, rows.map((row) => row.id), rows.filter((row) => row.status === 'pending').length)
        return rows.length
      })
      if (taken < batch) return
    }
  }

  return {
    async subject (subject) {
      const counts: OutboundSubjectCounts = { messages: 0, pendingMessages: 0, deliveries: 0, jobs: 0, jobsInFlight: 0 }
      await inBatches(sql.subjectBatch(s), subject, async (client, ids, pending) => {
        const jobs = await removeJobs(client, ids)
        await releaseKeyed(client, ids)
        counts.deliveries += (await client.query(sql.eraseAttempts(s), [ids])).rowCount ?? 0
        counts.messages += (await client.query(sql.deleteMessages(s), [ids])).rowCount ?? 0
        counts.pendingMessages += pending
        counts.jobs += jobs.removed
        counts.jobsInFlight += jobs.inFlight
      })
      return counts
    },

    async tenant (tenant) {
      const counts: OutboundTenantCounts = { endpoints: 0, messages: 0, deliveries: 0, jobs: 0, jobsInFlight: 0, portalLinkCodes: 0 }
      await inBatches(sql.tenantBatch(s), tenant, async (client, ids) => {
        const jobs = await removeJobs(client, ids)
        await releaseKeyed(client, ids)
        counts.deliveries += (await client.query(sql.deleteAttemptsOf(s), [ids])).rowCount ?? 0
        counts.messages += (await client.query(sql.deleteMessages(s), [ids])).rowCount ?? 0
        counts.jobs += jobs.removed
        counts.jobsInFlight += jobs.inFlight
      })
      const endpoints = (await db.pool.query<{ id: string }>(sql.endpointsOf(s), [tenant])).rows.map((row) => row.id)
      // The rest of the endpoints' log (messages already pruned, or another tenant's sent there by id), a batch at a time.
      for (let deleted = batch; deleted === batch && endpoints.length > 0;) {
        deleted = (await db.pool.query(sql.deleteAttemptsAt(s), [endpoints, batch])).rowCount ?? 0
        counts.deliveries += deleted
      }
      await inTransaction(db.pool, async (client) => {
        counts.endpoints = (await client.query(sql.deleteEndpoints(s), [endpoints])).rowCount ?? 0
        // Every portal token issued until now is refused, and a link not yet opened opens nothing.
        await client.query(portalSql.revokeTenant(s), [tenant, new Date()])
        counts.portalLinkCodes = (await client.query(sql.deleteLinkCodes(s), [tenant])).rowCount ?? 0
      })
      return counts
    }
  }
}
