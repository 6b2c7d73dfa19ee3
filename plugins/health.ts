/**
 * `GET /health/live`: the process answers. `GET /health/ready`: Redis answers a PING within a bound and the
 * worker (when this app runs one) is running. Ready is 503 while Redis is away and turns 200 again by
 * itself once it is back: the check runs on every probe, nothing is latched. A line is logged when the
 * answer changes (warn on becoming not ready, info on being ready again), not on every probe.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { Type, type Static } from '@sinclair/typebox'
import { errors } from '../src/shared/errors.js'
import { createQueueSampler, DEFAULT_SAMPLE_TIMEOUT_MS, type QueueSampler } from '../src/queue/queue-sampler.js'
import type { RedisInput } from '../src/redis/connect.js'
import { compileCheck, throwInvalid } from '../src/shared/validate.js'
import { Opaque, Whole } from '../src/shared/schemas.js'

export const DEFAULT_HEALTH_PREFIX = '/health'

export const AnvilHealthOptionsSchema = Type.Object({
  /** Where the routes live: `<prefix>/live`, `<prefix>/ready`. @defaultValue `'/health'` */
  prefix: Type.Optional(Type.String({ pattern: '^/\\S*[^/]$' })),
  /** The Redis to PING. @defaultValue the `anvil` plugin's connection on this app */
  redis: Type.Optional(Opaque<RedisInput>()),
  /** How long the PING may take. @defaultValue 1000 */
  timeoutMs: Type.Optional(Whole(1)),
  /** A worker whose `running` counts towards readiness. @defaultValue the `anvilWorker` on this app, if any */
  worker: Type.Optional(Type.Object({ running: Type.Readonly(Type.Boolean()) }))
}, { additionalProperties: false })

export type AnvilHealthOptions = Static<typeof AnvilHealthOptionsSchema>

export interface ReadyReport {
  status: 'ready' | 'not ready'
  redis: 'up' | 'down'
  worker?: 'running' | 'stopped'
}

const checkOptions = compileCheck(AnvilHealthOptionsSchema)

/** What "Redis answers" means for this app; decided once the app is ready (plugins may register in any order). */
function redisPing (app: FastifyInstance, sampler: QueueSampler | undefined, timeoutMs: number): () => Promise<boolean> {
  if (sampler !== undefined) return async () => await sampler.ping()
  app.addHook('onReady', async () => {
    // `app.anvil` may be the outbound plugin's alone (publish, no ingress).
    if (!app.hasDecorator('anvil') || !('ping' in app.anvil)) throw new errors.INVALID_OPTIONS('health needs `redis`, or the anvil plugin on the same app')
  })
  return async () => await app.anvil.ping(timeoutMs)
}

const anvilHealth: FastifyPluginAsync<AnvilHealthOptions> = async (app, options) => {
  throwInvalid(checkOptions(options))
  const prefix = options.prefix ?? DEFAULT_HEALTH_PREFIX
  const timeoutMs = options.timeoutMs ?? DEFAULT_SAMPLE_TIMEOUT_MS
  const sampler = options.redis === undefined ? undefined : createQueueSampler({ redis: options.redis, timeoutMs })
  if (sampler !== undefined) app.addHook('onClose', async () => await sampler.close())
  const ping = redisPing(app, sampler, timeoutMs)
  const worker = (): { readonly running: boolean } | undefined =>
    options.worker ?? (app.hasDecorator('anvilWorker') ? app.anvilWorker : undefined)

  // Every pod is probed every few seconds: only a change of the answer is worth a line. It starts as ready,
  // so a process that is ready from the start logs nothing.
  let lastState = 'ready'
  const noteState = (report: ReadyReport): void => {
    const state = JSON.stringify(report)
    if (state === lastState || (lastState === 'ready' && report.status === 'ready')) return
    const wasReady = lastState === 'ready'
    lastState = report.status === 'ready' ? 'ready' : state
    if (report.status === 'ready') app.log.info(report, 'anvil: ready again')
    else app.log.warn(report, wasReady ? 'anvil: not ready' : 'anvil: still not ready')
  }

  // Probes are frequent: their request lines are not worth logging.
  app.get(`${prefix}/live`, { logLevel: 'warn' }, async () => ({ status: 'live' }))
  app.get(`${prefix}/ready`, { logLevel: 'warn' }, async (_request, reply) => {
    const current = worker()
    const report: ReadyReport = { status: 'ready', redis: await ping() ? 'up' : 'down' }
    if (current !== undefined) report.worker = current.running ? 'running' : 'stopped'
    if (report.redis === 'down' || report.worker === 'stopped') report.status = 'not ready'
    noteState(report)
    return report.status === 'ready' ? report : await reply.code(503).send(report)
  })
}

const plugin: FastifyPluginAsync<AnvilHealthOptions> = fp(anvilHealth, { name: '@anvil/fastify-health', fastify: '5.x' })
export default plugin
