import type { WorkerCommandConfig } from '../src/config.js'
import { DEFAULT_REDIS_URL } from '../src/options.js'
import { createWorker } from '../src/worker.js'
import { loadHandler } from './handler-module.js'
import { Lifecycle } from './lifecycle.js'
import { createLogger } from './logging.js'

/** `anvil worker --handler ./module.js`: runs the user's handler on the queue until SIGTERM. */
export async function runWorker (config: WorkerCommandConfig, handlerPath: string): Promise<void> {
  const log = createLogger(config.logLevel)
  const { handler, file } = await loadHandler(handlerPath)
  const life = new Lifecycle(log)
  life.closeOnSignals(config.shutdownTimeoutMs)
  try {
    const worker = createWorker(handler, {
      redis: config.redisUrl ?? DEFAULT_REDIS_URL,
      queueName: config.queueName,
      prefix: config.prefix,
      concurrency: config.concurrency,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      logger: log
    })
    // Waits for active jobs up to the shutdown timeout, then forces (they come back as stalled).
    life.add('worker', async () => await worker.close())
    await worker.start()
    log.info({ handler: file, queue: config.queueName, concurrency: config.concurrency }, 'anvil worker: started')
  } catch (err) {
    await life.close()
    throw err
  }
}
