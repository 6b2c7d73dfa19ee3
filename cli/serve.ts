import type { ServeConfig } from '../src/config.js'
import { Lifecycle } from './lifecycle.js'
import { createLogger } from './logging.js'
import { buildServer, listen } from './server.js'

/** `anvil serve`: the ingress alone; workers run elsewhere (`anvil worker`). */
export async function serve (config: ServeConfig): Promise<void> {
  const log = createLogger(config.logLevel)
  const life = new Lifecycle(log)
  // The server has no worker to wait for: closing is quick.
  life.closeOnSignals(0)
  try {
    const app = await buildServer(config, log)
    // app.close stops accepting, lets in-flight requests finish, then closes the queue (onClose).
    life.add('server', async () => await app.close())
    const port = await listen(app, config.host, config.port)
    log.info({ host: config.host, port, queue: config.queueName }, 'anvil serve: listening')
  } catch (err) {
    await life.close()
    throw err
  }
}
