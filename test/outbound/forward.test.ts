import t from 'tap'
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import { Queue } from 'bullmq'
import { Webhook } from 'standardwebhooks'
import anvil from '../../index.js'
import { signRequest } from '../../src/testing/sign-request.js'
import { createWorker } from '../../src/worker/worker.js'
import { createForwarder } from '../../src/forward/create-forwarder.js'
import type { SourceOptions } from '../../src/inbound/source-options.js'
import { TestRedis } from '../helpers/redis.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const STRIPE_SECRET = 'whsec_' + randomBytes(24).toString('hex')
const FORWARD_SECRET = 'whsec_' + randomBytes(32).toString('base64')

t.test('a signed Stripe event goes ingress → queue → worker → the user\'s receiver, signed with Anvil\'s signature', async (t) => {
  let calls = 0
  const verified: unknown[] = []
  const receiver = await startReceiver((req, res) => {
    // The first attempt fails: the inbound job's own retry forwards it again.
    if (++calls === 1) { res.statusCode = 503; res.end('busy'); return }
    try {
      verified.push(new Webhook(FORWARD_SECRET).verify(req.body, req.headers as Record<string, string>))
      res.statusCode = 200
    } catch {
      res.statusCode = 401
    }
    res.end()
  })
  t.teardown(() => receiver.close())
  const sources: SourceOptions[] = [{ path: '/stripe', provider: 'stripe', secrets: [STRIPE_SECRET], forward: { url: receiver.url + '/in', secret: FORWARD_SECRET } }]
  const queueName = 'fwd1'
  const app = Fastify()
  await app.register(anvil, { redis: redis.url, queueName, sources, retrySchedule: [100] })
  t.teardown(() => app.close())
  const forwarder = createForwarder(sources, { allowNets: '127.0.0.0/8' })
  const worker = createWorker(forwarder.handler, { redis: redis.url, queueName, sweepIntervalMs: 0 })
  await worker.start()
  t.teardown(async () => {
    await worker.close()
    await forwarder.close()
  })

  const event = { id: 'evt_forward_1', object: 'event', type: 'invoice.paid', data: { object: { id: 'in_1', amount_paid: 500 } } }
  const signed = signRequest('stripe', { body: event, secret: STRIPE_SECRET })
  const response = await app.inject({ method: 'POST', url: '/stripe', headers: signed.headers, payload: signed.body })
  t.equal(response.statusCode, 202)
  await receiver.waitFor(2)

  const [first, second] = receiver.received
  t.equal(second?.body, signed.body, 'the provider\'s bytes, unchanged')
  t.same(verified, [event], 'the receiver verified Anvil\'s Standard Webhooks signature')
  t.equal(second?.headers['anvil-event-id'], 'evt_forward_1')
  t.equal(second?.headers['anvil-event-type'], 'invoice.paid')
  t.equal(second?.headers['anvil-provider'], 'stripe')
  t.equal(second?.headers['anvil-source'], 'stripe')
  t.equal(second?.headers['webhook-id'], 'evt_forward_1', 'the same id on every attempt')
  t.equal(first?.headers['webhook-id'], 'evt_forward_1')
  t.notOk(JSON.stringify(second?.headers).includes(STRIPE_SECRET), 'the provider secret never travels')

  // Without a database the attempts are in the job's log.
  const queue = new Queue(queueName, { connection: { url: redis.url }, prefix: '{anvil}' })
  t.teardown(() => queue.close())
  const [job] = await queue.getJobs(['completed', 'active', 'waiting', 'delayed'])
  t.ok(job !== undefined)
  const logs = await eventually('both attempts in the job log', async () => {
    const { logs } = await queue.getJobLogs(job?.id as string)
    return logs.length >= 2 && logs
  })
  t.match(logs.map((line) => JSON.parse(line)), [
    { messageId: 'evt_forward_1', endpointId: 'forward:stripe', attempt: 1, httpStatus: 503, errorClass: 'http_5xx', responseHead: 'busy', success: false },
    { messageId: 'evt_forward_1', endpointId: 'forward:stripe', attempt: 2, httpStatus: 200, success: true }
  ])
})

t.test('the forward is checked with the source', async (t) => {
  const base = { path: '/s', provider: 'stripe' as const, secrets: [STRIPE_SECRET] }
  const register = async (forward: SourceOptions['forward']): Promise<void> => {
    const app = Fastify()
    try {
      await app.register(anvil, { redis: redis.url, sources: [{ ...base, forward }] })
      await app.ready()
    } finally {
      await app.close()
    }
  }
  await t.rejects(register({ url: 'ftp://example.com', secret: FORWARD_SECRET }), /sources\.0\.forward\.url must be http or https/)
  await t.rejects(register({ url: 'https://u:p@example.com', secret: FORWARD_SECRET }), /must not carry credentials/)
  await t.rejects(register({ url: 'https://example.com', secret: 'not base64!' }), /sources\.0\.forward\.secret must be "whsec_" followed by base64/)
  await t.rejects(register({ url: 'https://example.com', secret: 'whsec_c2hvcnQ=' }), /at least 16 bytes/)
  await t.rejects(register({ url: 'https://example.com', secret: FORWARD_SECRET, bogus: 1 } as SourceOptions['forward']), /bogus/)
  await register({ url: 'https://example.com/hook', secret: FORWARD_SECRET, scheme: 'stripe' })
  t.throws(() => createForwarder([{ ...base, forward: { url: 'gopher://x', secret: FORWARD_SECRET } }]), /must be http or https/)
})

t.test('an event of a source that does not forward goes to the fallback handler, or fails', async (t) => {
  const seen: string[] = []
  const withFallback = createForwarder([], { fallback: (event) => { seen.push(event.source) } })
  t.teardown(() => withFallback.close())
  const event = { source: 'github', id: 'j1', payload: Buffer.from('{}') } as Parameters<typeof withFallback.handler>[0]
  const context = { log: async () => {} }
  await withFallback.handler(event, context)
  t.same(seen, ['github'])
  const without = createForwarder([])
  t.teardown(() => without.close())
  await t.rejects(async () => { await without.handler(event, context) }, { name: 'UnrecoverableError', message: /neither forwards nor has a handler/ })
})
