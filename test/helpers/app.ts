import Fastify, { type FastifyInstance } from 'fastify'
import anvil, { type AnvilPluginOptions } from '../../index.js'
import { signAnvil } from '../../src/providers/anvil.js'

export const SECRET = 'whsec_test_0123456789'

export interface SignedRequest {
  method: 'POST'
  url: string
  headers: Record<string, string>
  payload: Buffer
}

/** A POST signed with the default scheme. */
export function signed (body: Buffer | string, headers: Record<string, string> = {}, url = '/webhooks'): SignedRequest {
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(body)
  return {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', 'x-signature': signAnvil(SECRET, payload), ...headers },
    payload
  }
}

/** A Fastify app with the ingress plugin on the given Redis. Closed by the caller (t.teardown). */
export async function buildApp (redis: string, options: Partial<AnvilPluginOptions> = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(anvil, { redis, secret: SECRET, ...options })
  await app.ready()
  return app
}
