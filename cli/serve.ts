import type { ServeConfig } from './config/load-config.js'
import { Lifecycle } from './lifecycle.js'
import { createLogger } from './logging.js'
import { closeGracefully, buildServer, listen, registerMetrics, sampledQueue } from './server.js'
import { setUpTracing } from './tracing.js'
import { bindQueues } from './deployment.js'
import { DEFAULT_QUEUE_NAME, DEFAULT_REDIS_URL } from '../src/shared/constants.js'

/** `anvil serve`: the ingress alone; workers run elsewhere (`anvil worker`). */
export async function serve (config: ServeConfig): Promise<void> {
  const log = createLogger(config.logLevel, { logPayloads: config.logPayloads })
  const life = new Lifecycle(log)
  // The server has no worker to wait for: closing is quick.
  life.closeOnSignals(0)
  try {
    const tracing = await setUpTracing(config, 'anvil-serve', log, life)
    // With a database the ingress knows its deployment: it adds nothing to another deployment's queue.
    if (config.databaseUrl !== undefined) {
      const binding = { redisUrl: config.redisUrl ?? DEFAULT_REDIS_URL, prefix: config.prefix, queues: [config.queueName ?? DEFAULT_QUEUE_NAME] }
      if (!await bindQueues({ ...binding, database: { url: config.databaseUrl, schema: config.dbSchema } }, log, life)) return
    }
    const app = await buildServer(config, log, tracing)
    const metricsApp = await registerMetrics(app, config, sampledQueue(config), log)
    if (metricsApp !== undefined) {
      life.add('metrics server', async () => await closeGracefully(metricsApp))
      const metricsPort = await listen(metricsApp, config.host, config.metricsPort ?? 0)
      log.info({ host: config.host, port: metricsPort, path: config.metricsPath }, 'anvil serve: metrics listening')
    }
    // The admin API (its plugins, the outbox, the catalog) is loaded only when it is on.
    const adminApp = config.admin === undefined ? undefined : await (await import('./admin-server.js')).registerAdmin(app, config, log, undefined, tracing?.telemetry)
    if (adminApp !== undefined) {
      life.add('admin server', async () => await closeGracefully(adminApp))
      const adminPort = await listen(adminApp, config.host, config.admin?.port ?? 0)
      log.info({ host: config.host, port: adminPort }, 'anvil serve: admin API listening')
    } else if (config.admin !== undefined) {
      log.info('anvil serve: admin API on the main port')
    }
    // Closed first (the last added): app.close stops accepting, lets in-flight requests finish, then closes
    // the queue (onClose).
    life.add('server', async () => await closeGracefully(app))
    const port = await listen(app, config.host, config.port)
    log.info({ host: config.host, port, queue: config.queueName }, 'anvil serve: listening')
  } catch (err) {
    await life.close()
    throw err
  }
}
