/**
 * What a hostile or broken client can do to the plugin over a real socket: drop the connection mid-body
 * (counted as `aborted`, never as `malformed`, and not logged as a rejection), hold bodies open (a cap on
 * the bytes in flight answers 503 before reading more), and never finish a body (with the Fastify options
 * the README gives plugin users: 408, the socket closed, counted as `timeout`).
 */
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import Fastify, { type FastifyHttpOptions, type FastifyInstance } from 'fastify'
import type { Server } from 'node:http'
import anvil, { anvilMetrics, type AnvilPluginOptions } from '../../index.js'
import { TestRedis } from '../helpers/redis.js'
import { SECRET, signed } from '../helpers/app.js'
import { parseMetrics, sample } from '../helpers/metrics.js'
import { partialPost, statusOf } from '../helpers/raw-socket.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const ROUTE = { source: 'default', provider: 'anvil' }

/** A listening app with the plugin and metrics; its log lines are kept. */
async function listening (t: Test, options: Partial<AnvilPluginOptions>, fastify: FastifyHttpOptions<Server> = {}): Promise<{ app: FastifyInstance, port: number, lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = Fastify({ ...fastify, logger: { level: 'info', stream } })
  await app.register(anvil, { redis: redis.url, secret: SECRET, ...options })
  await app.register(anvilMetrics)
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const address = app.server.address()
  return { app, port: typeof address === 'object' && address !== null ? address.port : 0, lines }
}

async function rejected (app: FastifyInstance, reason: string): Promise<number> {
  return sample(parseMetrics((await app.inject({ url: '/metrics' })).body), 'anvil_webhooks_rejected_total', { ...ROUTE, reason }) ?? 0
}

t.test('a client that drops the connection mid-body counts as aborted, not malformed, and logs no rejection', async (t) => {
  const { app, port, lines } = await listening(t, { queueName: 'hostile-abort' })
  const client = await partialPost(port, { declared: 1000, sent: 10 })
  // The request is being read once it is counted as received.
  await eventually('the first request counted as received', async () => sample(parseMetrics((await app.inject({ url: '/metrics' })).body), 'anvil_webhooks_received_total', ROUTE) === 1)
  client.socket.destroy()
  await eventually('rejected(app, \'aborted\') === 1', async () => await rejected(app, 'aborted') === 1)
  t.equal(await rejected(app, 'malformed'), 0, 'not malformed: network trouble is not an attack')
  t.notOk(lines.some((line) => line.msg === 'anvil: request rejected'), 'no "request rejected" line')
  // A body the client did send whole but broken is still malformed.
  t.equal((await app.inject({ ...signed('x'), headers: { 'content-type': 'application/json' } })).statusCode, 401)
  t.equal(await rejected(app, 'malformed'), 1)
})

t.test('bodies in flight are capped: past maxInFlightBytes, 503 with Retry-After before the body is read', async (t) => {
  const { app, port, lines } = await listening(t, { queueName: 'hostile-budget', maxInFlightBytes: 3000 })
  const held = []
  for (let i = 0; i < 3; i++) held.push(await partialPost(port, { declared: 1000, sent: 100 }))
  await eventually('three requests counted as received', async () => sample(parseMetrics((await app.inject({ url: '/metrics' })).body), 'anvil_webhooks_received_total', ROUTE) === 3)
  const refused = await partialPost(port, { declared: 1000, sent: 100 })
  await refused.closed
  const answer = refused.received()
  t.equal(statusOf(answer), 503, answer)
  t.match(answer, /retry-after: 5/i)
  t.match(answer, /connection: close/i)
  t.match(answer, /"code":"ANVIL_ERR_BUSY"/)
  t.ok(lines.some((line) => line.msg === 'anvil: too many bodies in flight, answered 503' && line.maxInFlightBytes === 3000))
  for (const client of held) client.socket.destroy()
  await Promise.all(held.map(async (client) => await client.closed))
  // Their bytes are given back once their responses close: a whole request fits again.
  const { headers, payload } = signed('{"id":"after"}')
  await eventually('a 202 from POST /webhooks', async () => (await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers, body: payload.toString() })).status === 202)
  t.pass('accepted once the held bodies were gone')
})

t.test('plugin users: with the README\'s Fastify options, an unfinished body gets 408, its socket is closed, counted as timeout', async (t) => {
  // The README's advice for your own server, at 500 ms instead of 30 s.
  const timeoutMs = 500
  const { app, port, lines } = await listening(t, { queueName: 'hostile-timeout' }, {
    requestTimeout: timeoutMs,
    http: { requestTimeout: timeoutMs, headersTimeout: timeoutMs, connectionsCheckingInterval: 100 }
  })
  const clients = await Promise.all(Array.from({ length: 5 }, async () => await partialPost(port, { declared: 1000, sent: 10 })))
  await Promise.all(clients.map(async (client) => await client.closed))
  for (const client of clients) t.equal(statusOf(client.received()), 408, 'answered 408, then closed')
  await eventually('rejected(app, \'timeout\') === 5', async () => await rejected(app, 'timeout') === 5)
  t.equal(await rejected(app, 'malformed'), 0)
  t.equal(await rejected(app, 'aborted'), 0)
  t.notOk(lines.some((line) => line.msg === 'anvil: request rejected'))
})
