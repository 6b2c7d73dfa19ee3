import { Queue } from 'bullmq'
import type { WebhookJobData } from '../../src/job.js'
import { DEFAULT_PREFIX } from '../../src/constants.js'

/** A plain BullMQ Queue on the test Redis, to look at what the ingress wrote. Closed by the caller. */
export function inspectQueue (url: string, name: string): Queue<WebhookJobData> {
  return new Queue<WebhookJobData>(name, { connection: { url, maxRetriesPerRequest: null }, prefix: DEFAULT_PREFIX })
}
