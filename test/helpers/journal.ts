import type { Test } from 'tap'
import { Queue } from 'bullmq'
import { randomUUID } from 'node:crypto'
import type { WebhookJobData } from '../../src/queue/job-data.js'
import { DEFAULT_PREFIX, JOB_NAME } from '../../src/shared/constants.js'
import { BACKOFF_TYPE } from '../../src/queue/retry.js'
import { TestDatabase } from './pg.js'
import { TestRedis } from './redis.js'
import { beforeAll } from './before-all.js'

/** A job as the ingress would add it, with the fields a test picks; `key` differs per delivery. */
export function jobData (fields: Partial<WebhookJobData> & { body?: unknown } = {}): WebhookJobData {
  const { body = { hello: 'world' }, ...rest } = fields
  return {
    v: 1,
    source: 'stripe',
    provider: 'stripe',
    eventType: 'invoice.paid',
    key: `k_${randomUUID()}`,
    payload: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)).toString('base64'),
    contentType: 'application/json',
    signature: 't=1,v1=abc',
    headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=abc' },
    receivedAt: Date.now(),
    retry: [],
    requestId: `req-${randomUUID()}`,
    ...rest
  }
}

/** Adds a job straight to the queue (a new job id each time), with the attempts its retry schedule gives. */
export async function addJob (queue: Queue<WebhookJobData>, data: WebhookJobData): Promise<string> {
  const jobId = `e_${randomUUID()}`
  await queue.add(JOB_NAME, data, { jobId, attempts: data.retry.length + 1, backoff: { type: BACKOFF_TYPE } })
  return jobId
}

export function openQueue (url: string, name: string): Queue<WebhookJobData> {
  return new Queue<WebhookJobData>(name, { connection: { url, maxRetriesPerRequest: null }, prefix: DEFAULT_PREFIX })
}

/**
 * A private redis-server and a migrated database of its own for one test file, both gone when it ends. Started
 * in `t.before` (test/helpers/before-all.ts): read them inside tests.
 */
export function journalFixture (t: Test, redisArgs: string[] = []): { redis: TestRedis, db: TestDatabase } {
  return {
    redis: beforeAll(t, async () => await TestRedis.start(redisArgs), async (redis) => await redis.stop()),
    db: beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
  }
}
