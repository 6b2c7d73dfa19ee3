import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Type, type Static, type TObject } from '@sinclair/typebox'
import { errorReply, errors, isAnvilError } from '../src/shared/errors.js'
import { instrumentWebhookRoute } from './route-diagnostics.js'
import { Ingress, type EnqueueOptions } from '../src/inbound/ingress.js'
import { throttleRepeats, type WarnLogger } from '../src/shared/throttle-repeats.js'
import { DEFAULT_MAX_IN_FLIGHT_BYTES } from '../src/shared/constants.js'
import { BodyBudget } from './body-budget.js'
import { clientGone, watchRequestTimeouts } from './client-gone.js'
import { ingressProperties, resolveIngressOptions, type ResolvedIngress, type ResolvedSource } from '../src/inbound/ingress-options.js'
import type { EnqueueResult } from '../src/queue/webhook-queue.js'
import type { CatalogPublish } from '../src/catalog/anvil-types.js'
import { URL_SIGNING_PROVIDERS, type ProviderName } from '../src/providers/presets.js'
import { compileCheck, throwInvalid } from '../src/shared/validate.js'
import { Whole } from '../src/shared/schemas.js'
import { watchClock } from '../src/redis/clock-skew.js'

export const DEFAULT_CONNECT_TIMEOUT_MS = 5000

const pluginProperties = {
  /** How long registration waits for Redis before it goes on and answers 503 until Redis is there. @defaultValue 5000 */
  connectTimeoutMs: Type.Optional(Whole(0, undefined, { errorMessage: 'must be a whole number >= 0' })),
  /**
   * The bytes of webhook bodies read at once (by Content-Length; the body limit when there is none); past it,
   * 503 `ANVIL_ERR_BUSY` with Retry-After before the body is read. @defaultValue 67108864 (64 MiB)
   */
  maxInFlightBytes: Type.Optional(Whole(1))
}

/** The ingress's options (src/inbound/ingress-options.ts) and the plugin's own. */
export const AnvilPluginOptionsSchema: TObject<typeof ingressProperties & typeof pluginProperties> =
  Type.Object({ ...ingressProperties, ...pluginProperties }, { additionalProperties: false })

export type AnvilPluginOptions = Static<typeof AnvilPluginOptionsSchema>

const checkOptions = compileCheck(AnvilPluginOptionsSchema)

export interface AnvilDecorator {
  /** Enqueue from application code, with the webhooks' dedupe semantics. */
  enqueue (payload: Buffer | string | object, opts?: EnqueueOptions): Promise<EnqueueResult>
  /** True when Redis answers a PING within `timeoutMs` (default: `enqueueTimeoutMs`). */
  ping (timeoutMs?: number): Promise<boolean>
  readonly ingress: Ingress
  /**
   * Writes a message to the outbox, in the caller's transaction when given one; there when `anvilOutbound` is
   * registered. Typed by the event-type catalog registered in `AnvilTypes` (src/catalog/anvil-types.ts).
   */
  publish: CatalogPublish
}

declare module 'fastify' {
  interface FastifyInstance {
    anvil: AnvilDecorator
  }
}

const acceptedSchema = {
  202: {
    type: 'object',
    properties: { jobId: { type: 'string' }, replayed: { type: 'boolean' } },
    required: ['jobId', 'replayed']
  }
} as const

const acceptedEventSchema = {
  type: 'object',
  properties: { eventId: { type: 'string' }, jobId: { type: 'string' }, replayed: { type: 'boolean' } },
  required: ['jobId', 'replayed']
} as const

/**
 * For presets whose body is a batch (SendGrid): one entry per event, in the body's order, next to the
 * first event's `jobId` and `replayed` (true only when every event was already enqueued). An empty batch
 * makes no job: 200 `{ jobs: [] }`, a 2xx so the provider does not retry it. A schema of its own, so the
 * single-event answer's serializer stays as it is.
 */
const batchAcceptedSchema = {
  200: {
    type: 'object',
    properties: { jobs: { type: 'array', items: acceptedEventSchema } },
    required: ['jobs']
  },
  202: {
    type: 'object',
    properties: { jobId: { type: 'string' }, replayed: { type: 'boolean' }, jobs: { type: 'array', items: acceptedEventSchema } },
    required: ['jobId', 'replayed', 'jobs']
  }
} as const

/** Fastify's own codes for bodies it would not read, mapped to Anvil's. */
function toAnvilError (err: FastifyError, bodyLimit: number): FastifyError {
  if (isAnvilError(err)) return err
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new errors.BODY_TOO_LARGE(bodyLimit)
  return err
}

const anvil: FastifyPluginAsync<AnvilPluginOptions> = async (app, options) => {
  throwInvalid(checkOptions(options))
  const { connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS, maxInFlightBytes = DEFAULT_MAX_IN_FLIGHT_BYTES, ...ingressOptions } = options
  const resolved = resolveIngressOptions(ingressOptions)
  for (const source of resolved.sources) {
    if (URL_SIGNING_PROVIDERS.includes(source.provider as ProviderName) && source.publicUrl === undefined) {
      app.log.warn({ source: source.name }, 'anvil: this preset signs the URL; without publicUrl it is rebuilt from Host, which a proxy changes')
    }
  }
  // While Redis is away, ioredis reports every reconnect attempt and every webhook is answered 503: one
  // line per window is enough, and its summary counts the rest.
  const redisLog = throttleRepeats(app.log)
  const budget = new BodyBudget(maxInFlightBytes, resolved.bodyLimit)
  watchRequestTimeouts(app.server)
  const ingress = new Ingress(resolved, (err) => redisLog.warn({ err: err.message }, 'anvil: Redis error'))
  try {
    const decorator = {
      enqueue: async (payload: Buffer | string | object, opts?: EnqueueOptions) => await ingress.enqueue(payload, opts),
      ping: async (timeoutMs?: number) => await ingress.queue.ping(timeoutMs),
      ingress
    } satisfies Omit<AnvilDecorator, 'publish'>
    // anvilOutbound, registered first, made `app.anvil` for its publish: join it (a second ingress still fails).
    if (app.hasDecorator('anvil') && !('ingress' in app.anvil)) Object.assign(app.anvil, decorator)
    else app.decorate('anvil', decorator as AnvilDecorator)
    const route = { resolved, ingress, budget, redisLog, maxInFlightBytes }
    for (const source of resolved.sources) await app.register(sourceRoute(source, route))
  } catch (err) {
    // A registration that fails (a route the host already has, a second `anvil` on one app) leaves no connection open.
    await ingress.close()
    throw err
  }
  const stopClock = watchClock(ingress.queue.client, app.log)
  app.addHook('onClose', async () => { stopClock(); await ingress.close() })

  if (!await ingress.queue.waitForRedis(connectTimeoutMs)) {
    app.log.warn('anvil: Redis is not reachable yet; webhooks get 503 until it is')
  }
}

/** A source's route, in a context of its own: its catch-all Buffer parser never touches the host's parsers. */
interface RouteContext {
  resolved: ResolvedIngress
  ingress: Ingress
  budget: BodyBudget
  redisLog: WarnLogger
  maxInFlightBytes: number
}

function sourceRoute (source: ResolvedSource, { resolved, ingress, budget, redisLog, maxInFlightBytes }: RouteContext): FastifyPluginAsync {
  return async function anvilRoutes (child: FastifyInstance) {
    child.removeAllContentTypeParsers()
    instrumentWebhookRoute(child, { source: source.name, provider: source.provider })
    budget.guard(child)
    child.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: resolved.bodyLimit }, (_req, body, done) => {
      done(null, body)
    })
    child.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const gone = clientGone(request, error)
      if (gone !== undefined) {
        // Nobody is listening (a timed-out client already has Node's 408): no answer, and not a rejection.
        request.log.debug({ source: source.name, reason: gone }, 'anvil: client went away before its body was complete')
        return await reply.code(gone === 'timeout' ? 408 : 400).send()
      }
      const err = toAnvilError(error, resolved.bodyLimit)
      const statusCode = err.statusCode !== undefined && err.statusCode >= 400 ? err.statusCode : 500
      if (statusCode === 503) {
        reply.header('retry-after', String(resolved.retryAfterSeconds))
        const reason = (err.cause as Error | undefined)?.message ?? err.message
        const busy = err instanceof errors.BUSY
        redisLog.warn({ requestId: request.id, code: err.code, reason, ...(busy ? { maxInFlightBytes } : {}) },
          busy ? 'anvil: too many bodies in flight, answered 503' : 'anvil: queue unavailable, answered 503')
      } else if (statusCode >= 500) {
        request.log.error({ err }, 'anvil: request failed')
      } else {
        request.log.info({ code: err.code, source: source.name }, 'anvil: request rejected')
      }
      // A 5xx other than Anvil's own may carry internals: its message and code stay in the log.
      return await reply.code(statusCode).send(errorReply(err, statusCode, err.code ?? 'ANVIL_ERR_INTERNAL'))
    })

    const response = source.scheme.batches === true ? batchAcceptedSchema : acceptedSchema
    child.post(source.path, { schema: { response } }, async (request, reply) => {
      // No body (or an empty one) is still signed bytes: the empty string.
      const payload = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
      const result = await ingress.accept(payload, request.headers, { source: source.name, url: signedUrl(request, source.publicUrl), requestId: request.id })
      if ('handshake' in result) {
        request.log.info({ source: source.name }, 'anvil: handshake answered')
        // Widened: the route's schema types only the 202; a handshake answers with the provider's own status.
        return await (reply as FastifyReply).code(result.handshake.statusCode).send(result.handshake.body)
      }
      if ('jobs' in result) {
        const { jobId, replayed, jobs } = result
        request.log.info({ jobId, replayed, events: jobs.length, source: source.name }, 'anvil: accepted')
        return jobId === undefined
          ? await (reply as FastifyReply).code(200).send({ jobs })
          : await reply.code(202).send({ jobId, replayed, jobs })
      }
      request.log.info({ jobId: result.jobId, replayed: result.replayed, source: source.name }, 'anvil: accepted')
      if (result.acknowledge !== undefined) {
        return await (reply as FastifyReply).code(result.acknowledge.statusCode).send(result.acknowledge.body)
      }
      return await reply.code(202).send({ jobId: result.jobId, replayed: result.replayed })
    })
  }
}

/**
 * The URL the provider signed (Twilio, Square): the configured public URL plus the request's own query
 * string, else rebuilt from Host (X-Forwarded-Host and X-Forwarded-Proto count only under Fastify's trustProxy).
 */
function signedUrl (request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) {
    const query = request.url.indexOf('?')
    return query === -1 ? publicUrl : publicUrl + request.url.slice(query)
  }
  return `${request.protocol}://${request.host}${request.url}`
}

/** Named by its options' type, so a declaration file refers to it (and to each field's documentation). */
const plugin: FastifyPluginAsync<AnvilPluginOptions> = fp(anvil, { name: '@anvil/fastify', fastify: '5.x' })
export default plugin
