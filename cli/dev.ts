import { join } from 'node:path'
import type { Logger } from 'pino'
import { anvilWorker } from '../index.js'
import { DEV_SECRET, type DevConfig, type Env } from './config/load-config.js'
import { workerOptions } from './config/worker-options.js'
import { DEFAULT_PATH, DEFAULT_QUEUE_NAME, DEFAULT_REDIS_URL } from '../src/shared/constants.js'
import { DEV_REDIS_DIR, ensureDevRedis } from './dev-redis.js'
import type { WebhookEvent } from '../src/worker/webhook-event.js'
import { errors } from '../src/shared/errors.js'
import { redactUrl, redisUrlProblem } from '../src/redis/connect.js'
import type { WebhookHandler } from '../src/worker/worker.js'
import { Lifecycle } from './lifecycle.js'
import { migrate } from '../src/db/migrate.js'
import { startOutbound } from './outbound-worker.js'
import { bindQueues } from './deployment.js'
import { DEFAULT_OUTBOUND_QUEUE_NAME } from '../src/delivery/delivery-job.js'
import { loadHandler } from './handler-module.js'
import { createLogger, prettyDestination } from './logging.js'
import { freshTestBody, localUrl, opensslCurl, sendLine, signedCurl } from './quickstart.js'
import { SEND_SECRET_ENV } from './send.js'
import { closeGracefully, buildServer, listen, registerMetrics } from './server.js'
import { setUpTracing } from './tracing.js'

/** Internal: where `anvil dev` looks for a Redis when REDIS_URL is unset (tests point it at an empty port). */
export const PROBE_URL_ENV = 'ANVIL_DEV_REDIS_PROBE_URL'

function field (value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined
}

/** What `anvil dev` lets outgoing webhooks reach when ANVIL_OUTBOUND_ALLOW_NETS is unset: receivers on this machine. */
export const DEV_OUTBOUND_ALLOW_NETS = '127.0.0.0/8,::1/128'

/** Logs what arrived. The id and type come from the job, else from a JSON body's `id` and `type`. */
export function loggingHandler (log: Logger): WebhookHandler {
  return (event: WebhookEvent) => {
    let body: Record<string, unknown> = {}
    try {
      const parsed = event.json()
      if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>
    } catch {}
    log.info({
      jobId: event.id,
      requestId: event.requestId,
      eventId: event.eventId ?? field(body.id),
      eventType: event.eventType ?? field(body.type),
      bytes: event.payload.length,
      attempt: event.attempt
    }, 'anvil dev: event')
  }
}

function banner (url: string, config: DevConfig): string {
  if (config.sources !== undefined) {
    // Sources from a file: list where each provider posts (there is no one test request to print).
    const base = url.slice(0, url.length - (config.path ?? DEFAULT_PATH).length)
    const routes = config.sources.map((source) => `  ${source.provider ?? 'anvil'}: ${base}${source.path}`)
    // Secrets from the file are never printed: the send lines read theirs from ANVIL_SEND_SECRET.
    const sends = config.sources.map((source) => '  ' + sendLine(`${base}${source.path}`, source.provider ?? 'anvil', source.publicUrl))
    return ['', 'anvil dev: ready. Sources:', ...routes, '',
      `Send a signed sample event to each (${SEND_SECRET_ENV} set to that source's secret; discord, sendgrid: a PEM private key):`,
      '', ...sends, '', ''].join('\n')
  }
  const body = freshTestBody()
  const lines = [
    '',
    `anvil dev: ready on ${url}. Send a signed test webhook (a new event id each run; sent twice, it is a`,
    'duplicate: "replayed": true, and the handler does not run again):',
    '',
    '  ' + signedCurl(url, config.secret, body),
    '',
    'or sign it yourself with openssl:',
    ''
  ]
  // The dev secret is a published default, not a secret; a secret the user set is never shown.
  if (config.devSecret) lines.push(`  export WEBHOOK_SECRET=${DEV_SECRET}`)
  lines.push('  ' + opensslCurl(url, body), '', 'or with npx anvil send (signs like any provider; --redeliver shows the dedupe):', '')
  lines.push(`  ${SEND_SECRET_ENV}=${config.devSecret ? DEV_SECRET : '"$WEBHOOK_SECRET"'} ${sendLine(url, 'anvil')}`, '', '')
  return lines.join('\n')
}

/**
 * `anvil dev`: ingress and a worker in one process, with a private Redis when none is running. The worker
 * runs the handler module at `handlerPath` (as `anvil worker --handler` does), else one that logs each event.
 * On a terminal the log lines are pretty-printed.
 */
export async function dev (config: DevConfig, env: Env, handlerPath?: string): Promise<void> {
  const destination = process.stdout.isTTY ? await prettyDestination() : undefined
  const log = createLogger(config.logLevel, { logPayloads: config.logPayloads, destination })
  const handler = handlerPath === undefined ? loggingHandler(log) : (await loadHandler(handlerPath)).handler
  const life = new Lifecycle(log)
  life.closeOnSignals(config.shutdownTimeoutMs)
  try {
    const tracing = await setUpTracing(config, 'anvil-dev', log, life)
    let redisUrl = config.redisUrl
    if (redisUrl === undefined) {
      const probeUrl = env[PROBE_URL_ENV] || DEFAULT_REDIS_URL
      const problem = redisUrlProblem(probeUrl)
      if (problem !== undefined) throw new errors.INVALID_CONFIG(`${PROBE_URL_ENV} ${problem}`)
      const found = await ensureDevRedis({ probeUrl, dir: join(process.cwd(), DEV_REDIS_DIR) })
      if (found.started !== undefined) {
        const started = found.started
        life.add('redis-server', async () => {
          await started.stop()
          log.info({ redisPid: started.pid }, 'anvil dev: stopped redis-server')
        })
        log.info({ redisPid: started.pid, url: redactUrl(started.url), dir: started.dir }, 'anvil dev: started redis-server')
      } else {
        log.info({ url: redactUrl(found.url) }, 'anvil dev: using the Redis that is running')
      }
      redisUrl = found.url
    }
    const database = config.databaseUrl === undefined ? undefined : { url: config.databaseUrl, schema: config.dbSchema }
    // A laptop's database is brought up to date first: its id is the deployment's.
    if (database !== undefined) await migrate(database.url, database.schema === undefined ? {} : { schema: database.schema })
    // The project's queues, claimed before the ingress adds to them or the worker takes from them: two projects
    // on one Redis (the one on the default URL, say) never take each other's events.
    const queues = [config.queueName ?? DEFAULT_QUEUE_NAME, ...(database === undefined ? [] : [DEFAULT_OUTBOUND_QUEUE_NAME])]
    if (!await bindQueues({ redisUrl, prefix: config.prefix, queues, database, projectDir: join(process.cwd(), DEV_REDIS_DIR) }, log, life)) return
    const app = await buildServer({ ...config, redisUrl, allowShortSecrets: true, journalQueue: config.journal?.queue }, log, tracing)
    await app.register(anvilWorker, { handler, ...workerOptions(config, redisUrl, tracing?.telemetry) })
    if (config.databaseUrl !== undefined) {
      // The outgoing side runs here as in `anvil worker`, and may reach receivers on this machine unless told otherwise.
      const outboundAllowNets = config.outboundAllowNets ?? DEV_OUTBOUND_ALLOW_NETS
      if (config.outboundAllowNets === undefined) {
        log.info({ allowNets: outboundAllowNets }, 'anvil dev: outgoing webhooks may reach loopback, for receivers on this machine (ANVIL_OUTBOUND_ALLOW_NETS sets otherwise)')
      }
      const sending = startOutbound({ ...config, outboundAllowNets, databaseUrl: config.databaseUrl, redisUrl }, log, life, tracing?.telemetry)
      app.decorate('anvilOutbound', sending.outbound)
      sending.start()
    }
    const metricsApp = await registerMetrics(app, config, { redis: redisUrl, queueName: config.queueName, prefix: config.prefix }, log)
    if (metricsApp !== undefined) {
      life.add('metrics server', async () => await closeGracefully(metricsApp))
      const metricsPort = await listen(metricsApp, config.host, config.metricsPort ?? 0)
      log.info({ host: config.host, port: metricsPort, path: config.metricsPath }, 'anvil dev: metrics listening')
    }
    // Closes the server, then the queue and the worker (onClose hooks), before Redis is stopped.
    life.add('server', async () => await closeGracefully(app))
    const port = await listen(app, config.host, config.port)
    process.stdout.write(banner(localUrl(config.host, port, config.path ?? DEFAULT_PATH), config))
    log.info({ host: config.host, port, handler: handlerPath ?? 'logging' }, 'anvil dev: listening')
  } catch (err) {
    await life.close()
    throw err
  }
}
