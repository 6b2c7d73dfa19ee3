/**
 * Order per key (docs/outgoing-webhooks.md, "Order"). The claim takes a key's messages one at a time, in publish
 * order (src/sql/outbox.ts `claim`). A keyed message's fan-out adds no job: it writes a row per endpoint to
 * `ordered_deliveries`, in the transaction that marks it dispatched, and per endpoint and key the first row is the
 * head. A head's job is added by `releaseReady`; its final outcome (src/delivery/ordered-attempt.ts) removes its row
 * and makes the next one ready, in one transaction, whose NOTIFY wakes a dispatcher to add that one's job. Every
 * step is a row's state, so a process killed between two of them leaves work the next pass picks up: a head whose job
 * was added twice is one job (its id), and a follower is never added before its head's outcome is in the log.
 */
import { inTransaction, type Database } from '../db/database.js'
import * as outboxSql from '../sql/outbox.js'
import type { AnvilLogger } from '../shared/logger.js'
import { targetsOf, type FanOut, type OutboxMessage } from './fan-out.js'
import { traceOfRow } from '../queue/trace-context.js'

export interface Ordering {
  /**
   * A claimed keyed message, fanned out to its endpoints' rows and marked dispatched in one transaction; false when
   * its lease (dispatcher `owner`) was lost meanwhile, and nothing was written.
   */
  enqueue (message: OutboxMessage, owner: string): Promise<boolean>
  /** Adds the jobs of up to `limit` heads made ready: the number of heads read. */
  releaseReady (limit: number): Promise<number>
}

/** A ready head and its message (null columns: the message is gone). */
interface ReadyRow {
  endpoint_id: string
  ordering_key: string
  message_id: string
  id: string | null
  public_type: string | null
  tenant: string | null
  data: string | null
  created_at: Date | null
  traceparent: string | null
  tracestate: string | null
}

/** `release` is the delivery store's (`releaseOrdered`): a head with nothing to send is given up as a delivery's outcome is. */
export function createOrdering (
  db: Database, fanOut: FanOut, release: (messageId: string, endpointId: string, key: string) => Promise<void>, log: AnvilLogger
): Ordering {
  async function releaseOne (row: ReadyRow): Promise<void> {
    const { endpoint_id: endpointId, ordering_key: key, message_id: messageId } = row
    // Its publish's trace: the dispatch span that wrote this row has ended long before a head's turn may come.
    const jobs = row.id === null || row.data === null || row.created_at === null
      ? []
      : await fanOut({ id: row.id, publicType: row.public_type, tenant: row.tenant, data: row.data, createdAt: row.created_at, ...traceOfRow(row) }, { endpointId, orderingKey: key })
    if (jobs.length === 0) {
      // The endpoint or the message is gone: nothing to send, and the key's next message there goes.
      log.warn({ messageId, endpointId }, 'anvil outbound: a keyed message has nowhere to go; the next of its key goes')
      await release(messageId, endpointId, key)
      return
    }
    await db.pool.query(outboxSql.markOrderedQueued(db.schema), [messageId, endpointId, key])
  }

  return {
    async enqueue (message, owner) {
      const key = message.orderingKey as string
      const endpoints = (await targetsOf(db, message)).map((endpoint) => endpoint.id)
      return await inTransaction(db.pool, async (client) => {
        const { rowCount } = await client.query(outboxSql.markDispatched(db.schema), [message.id, owner])
        if (rowCount === 0) return false
        if (endpoints.length > 0) {
          await client.query(outboxSql.lockOrderedPairs(), [endpoints, key])
          await client.query(outboxSql.enqueueOrdered(db.schema), [endpoints, key, message.orderingSeq, message.id])
        }
        return true
      })
    },
    async releaseReady (limit) {
      const { rows } = await db.pool.query<ReadyRow>(outboxSql.readyOrdered(db.schema), [limit])
      await Promise.all(rows.map(async (row) => await releaseOne(row).catch((err: Error) => {
        // Left ready: the next pass tries again (Redis away, say).
        log.warn({ messageId: row.message_id, endpointId: row.endpoint_id, err: err.message }, 'anvil outbound: a keyed message\'s job not added; the next pass tries again')
      })))
      return rows.length
    }
  }
}
