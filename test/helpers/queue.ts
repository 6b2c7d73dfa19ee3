import { Queue } from 'bullmq'
import type { WebhookJobData } from '../../src/queue/job-data.js'
import { DEFAULT_PREFIX } from '../../src/shared/constants.js'
import type { RedisTarget } from './target.js'

/** A plain BullMQ Queue on the test Redis, to look at what the ingress wrote. Closed by the caller. */
export function inspectQueue (redis: RedisTarget | string, name: string): Queue<WebhookJobData> {
  const connection = typeof redis === 'string' ? { url: redis, maxRetriesPerRequest: null } : redis.connection()
  return new Queue<WebhookJobData>(name, { connection, prefix: DEFAULT_PREFIX })
}
