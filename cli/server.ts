import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import anvil from '../index.js'
import type { CommonConfig, IngressConfig } from '../src/config.js'
import { DEFAULT_REDIS_URL } from '../src/options.js'

/** A Fastify app with the ingress plugin, not yet listening. Its onClose hooks close the queue. */
export async function buildServer (config: CommonConfig & IngressConfig, log: Logger): Promise<FastifyInstance> {
  // Typed as Fastify's base logger so the app's type matches the plugins' (a pino Logger is one).
  const app = Fastify({ loggerInstance: log as FastifyBaseLogger })
  await app.register(anvil, {
    redis: config.redisUrl ?? DEFAULT_REDIS_URL,
    secret: config.secret,
    path: config.path,
    queueName: config.queueName,
    prefix: config.prefix,
    bodyLimit: config.bodyLimit,
    dedupeWindowMs: config.dedupeWindowMs,
    retrySchedule: config.retrySchedule,
    idempotency: config.idempotency
  })
  return app
}

/** Listens and returns the port actually bound (PORT=0 picks a free one). */
export async function listen (app: FastifyInstance, host: string, port: number): Promise<number> {
  await app.listen({ host, port })
  return (app.server.address() as AddressInfo).port
}
