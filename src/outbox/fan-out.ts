import type { JobsOptions, Queue } from 'bullmq'
import type pg from 'pg'
import type { Database } from '../db/database.js'
import * as sql from '../sql/endpoints.js'
import { OUTBOUND_JOB_NAME, outboundJobId, type OutboundJobData } from '../delivery/delivery-job.js'
import type { OutboundScheme } from '../send/sign-outbound.js'
import type { FairOrder } from '../delivery/fair-order.js'
import { TENANT_OPERATIONAL_TYPES, dataFor } from '../endpoints/operational-events.js'
import { createFanOutLane } from './fan-out-lane.js'
import type { TraceContext } from '../queue/trace-context.js'

/** What fan-out needs of an outbox row. */
export interface OutboxMessage {
  id: string
  publicType: string | null
  tenant: string | null
  /** The data's JSON text. */
  data: string
  createdAt: Date
  /** One of Anvil's operational events: it goes to the operational endpoints (src/endpoints/operational-events.ts). */
  operational?: boolean
  /** Its ordering key and its place in the key's order (src/outbox/ordering.ts). */
  orderingKey?: string | null
  orderingSeq?: string | null
  /** The trace it was published in (its dispatch span's, when traced): each job carries it to its receiver. */
  trace?: TraceContext
}

/** A delivery job per endpoint: the exact id of the first try, or new ids with a suffix (retry, recover, resend). */
export interface FanOutTarget {
  endpointId?: string
  /** These endpoints, as the caller chose them. */
  endpointIds?: readonly string[]
  suffix?: string
  /**
   * BullMQ's deduplication id of the job (one endpoint): while a job added under it has not finished, the add
   * makes nothing and the answer names that job instead.
   */
  deduplicationId?: string
  /** Reads the endpoints on this client (the caller's transaction) instead of the pool. */
  client?: pg.ClientBase
  /** The job is its key's head at the endpoint: its final outcome lets the next one go (src/outbox/ordering.ts). */
  orderingKey?: string
}

/** The envelope receivers get, built from the stored JSON text so no byte of the data changes. */
export function envelope (message: OutboxMessage, type: string): string {
  return `{"id":${JSON.stringify(message.id)},"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(message.createdAt.toISOString())},"data":${message.data}}`
}

/** An endpoint a message goes to; `operational` is read where operational endpoints may be among them. */
export interface Target { id: string, url: string, scheme: OutboundScheme, operational?: boolean }

export type FanOut = (message: OutboxMessage, target?: FanOutTarget) => Promise<string[]>

/** The endpoints a message goes to: the subscribed, enabled ones of its tenant, or those the target names. */
export async function targetsOf (db: Database, message: OutboxMessage, target: FanOutTarget = {}): Promise<Target[]> {
  if (message.publicType === null) return []
  const type = message.publicType
  const client = target.client ?? db.pool
  const chosen = target.endpointIds ?? (target.endpointId === undefined ? undefined : [target.endpointId])
  const { rows } = chosen !== undefined
    ? await client.query<Target>(sql.byIds(db.schema), [chosen])
    : message.operational === true
      ? await client.query<Target>(sql.subscribedOperational(db.schema), [message.tenant, type, TENANT_OPERATIONAL_TYPES.includes(type)])
      : await client.query<Target>(sql.subscribed(db.schema), [message.tenant, type])
  return rows
}

/**
 * One job per subscribed, enabled endpoint of the message's tenant (or the one endpoint asked for). Job ids
 * are deterministic, and BullMQ keeps the first of an id, so running this twice adds nothing.
 */
export function createFanOut (db: Database, queue: Queue<OutboundJobData>, jobOptions: JobsOptions, schedule: readonly number[], fair?: FairOrder): FanOut {
  // Each job carries its retry delays, so the delivery worker retries it as this publisher's setting says.
  const retry = [...schedule]
  // This process's fan-outs reach Redis through one lane, in chunks, the tenants in turn (src/outbox/fan-out-lane.ts).
  const lane = createFanOutLane()
  return async (message, target = {}) => {
    const rows = await targetsOf(db, message, target)
    if (rows.length === 0 || message.publicType === null) return []
    const type = message.publicType
    const operational = message.operational === true
    // An operational event: the operator's endpoints and a tenant's each get their own link (dataFor).
    const bodies = operational
      ? new Map([true, false].map((operator) => [operator, envelope({ ...message, data: dataFor(message.data, operator) }, type)]))
      : undefined
    const plain = bodies === undefined ? envelope(message, type) : ''
    const bodyFor = (endpoint: Target): string => bodies?.get(endpoint.operational === true) ?? plain
    // Taken in fair order between tenants (src/delivery/fair-order.ts): a tenant's burst does not hold back another's jobs.
    // A priority the deployment set itself in its job options is kept.
    const priorities = fair === undefined || jobOptions.priority !== undefined ? undefined : await fair.priorities(message.tenant, rows.length)
    const jobs = rows.map((endpoint, i) => ({
      name: OUTBOUND_JOB_NAME,
      // Whatever happens to an operational event, or to anything sent to an operational endpoint (a test), reports nothing.
      data: {
        messageId: message.id, endpointId: endpoint.id, eventType: type, url: endpoint.url, body: bodyFor(endpoint), scheme: endpoint.scheme, retry,
        ...(operational || endpoint.operational === true ? { operational: true } : {}),
        ...(target.orderingKey === undefined ? {} : { orderingKey: target.orderingKey }),
        ...message.trace
      },
      opts: {
        ...jobOptions,
        ...(priorities === undefined ? {} : { priority: priorities[i] }),
        jobId: outboundJobId(message.id, endpoint.id, target.suffix),
        ...(target.deduplicationId === undefined ? {} : { deduplication: { id: target.deduplicationId } })
      }
    }))
    // The ids Redis answered: a deduplicated add names the job already there.
    return await lane.add(message.tenant, jobs, async (chunk) => (await queue.addBulk(chunk)).map((job) => job.id as string))
  }
}
