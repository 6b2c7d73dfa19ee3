import { Queue } from 'bullmq'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULT_PREFIX } from '../../src/shared/constants.js'
import { Ingress } from '../../src/inbound/ingress.js'
import type { WebhookJobData } from '../../src/queue/job-data.js'
import { resolveIngressOptions, type IngressOptions } from '../../src/inbound/ingress-options.js'
import { createWorker, type AnvilWorker, type WebhookHandler, type WorkerOptions } from '../../src/worker/worker.js'
import { SECRET } from './app.js'
import type { RedisTarget } from './target.js'

interface Teardown { teardown (fn: () => unknown): void }

/** Ingress, worker and a queue to inspect, on the test's Redis target; each closed when the test ends. */
export function chainOn (t: Teardown, redis: RedisTarget): {
  ingressFor: (queueName: string | undefined, extra?: Partial<IngressOptions>) => Ingress
  workerFor: (queueName: string | undefined, handler: WebhookHandler, extra?: Partial<WorkerOptions>) => AnvilWorker
  queueFor: <T = WebhookJobData>(queueName: string) => Queue<T>
} {
  return {
    ingressFor (queueName, extra = {}) {
      const ingress = new Ingress(resolveIngressOptions({ redis: redis.url, secret: SECRET, queueName, ...extra }))
      t.teardown(() => ingress.close())
      return ingress
    },
    workerFor (queueName, handler, extra = {}) {
      const worker = createWorker(handler, { redis: redis.url, queueName, sweepIntervalMs: 0, ...extra })
      t.teardown(() => worker.close())
      return worker
    },
    queueFor<T = WebhookJobData> (queueName: string) {
      const queue = new Queue<T>(queueName, { connection: redis.connection(), prefix: DEFAULT_PREFIX })
      t.teardown(() => queue.close())
      return queue
    }
  }
}

