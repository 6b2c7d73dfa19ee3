/**
 * The router's dispatch rules, through a real Redis, ingress and worker (`createWorker(router)`): every
 * matching handler runs, in order exact → `<provider>:*` → onAny; failures are one AggregateError and the job
 * is retried, running every handler again; unmatched events go to onUnhandled, else complete with a debug
 * line; `source()` scopes; handlers are refused once the worker started.
 */
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { UnrecoverableError } from 'bullmq'
import anvil, { createRouter, createWorker, type Router } from '../../index.js'
import { fixture, injectWebhook } from '../../testing/index.js'
import { TestRedis } from '../helpers/redis.js'

import { inspectQueue } from '../helpers/queue.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const SECRET = 'rules-secret-0123456789'
const SOURCES = [
  { provider: 'github' as const, path: '/github', secrets: [SECRET] },
  { provider: 'stripe' as const, path: '/stripe', secrets: [SECRET] },
  { provider: 'stripe' as const, name: 'stripe-eu', path: '/stripe-eu', secrets: [SECRET] }
]
let queues = 0

interface Line { level: string, obj: Record<string, unknown>, msg?: string }

/** An ingress app and a started worker running `router` on a queue of their own; `retrySchedule` as given. */
async function rig (t: Test, router: Router, retrySchedule: number[] = []): Promise<{ post: (provider: 'github' | 'stripe', name: string, source?: string) => Promise<string>, lines: Line[], queueName: string }> {
  const queueName = `rules-${++queues}`
  const app = Fastify({ logger: false })
  await app.register(anvil, { redis: redis.url, queueName, sources: SOURCES, retrySchedule })
  await app.ready()
  const lines: Line[] = []
  const log = (level: string) => (obj: object, msg?: string) => { lines.push({ level, obj: obj as Record<string, unknown>, msg }) }
  const worker = createWorker(router, {
    redis: redis.url, queueName, sweepIntervalMs: 0,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
  })
  t.teardown(async () => { await worker.close(); await app.close() })
  await worker.start()
  return {
    lines,
    queueName,
    post: async (provider, name, source) => {
      const res = await injectWebhook(app, { provider, source, fixture: fixture(provider, name as never), secret: SECRET })
      t.equal(res.statusCode, 202, res.body)
      return res.json().jobId as string
    }
  }
}

t.test('every matching handler runs once per event, exact (most specific first) → provider:* → onAny', async (t) => {
  const calls: string[] = []
  const router = createRouter()
  router.onAny((event) => { calls.push(`any ${event.name ?? ''}`) })
  router.on('github:*', () => { calls.push('github:*') })
  router.on('github:pull_request', (event) => { calls.push(`pull_request (${event.action ?? ''})`) })
  router.on('github:pull_request.opened', () => { calls.push('pull_request.opened') })
  // One registration for several matching names runs once.
  router.on(['github:pull_request', 'github:pull_request.opened'], () => { calls.push('both names') })
  router.on('github:issues', () => { calls.push('issues: not this event') })
  const { post } = await rig(t, router)
  await post('github', 'pull_request.opened')
  await eventually('the onAny handler', () => calls.length === 5)
  t.same(calls, ['pull_request.opened', 'both names', 'pull_request (opened)', 'github:*', 'any github:pull_request.opened'])
})

t.test('failures are gathered in one AggregateError; the job is retried, and every handler runs again', async (t) => {
  const calls: string[] = []
  const router = createRouter()
  router.on('stripe:invoice.paid', (event) => {
    calls.push(`a${event.attempt}`)
    if (event.attempt === 1) throw new Error('first failed')
  })
  router.on('stripe:invoice.paid', (event) => { calls.push(`b${event.attempt}`) })
  router.on('stripe:*', (event) => {
    calls.push(`c${event.attempt}`)
    if (event.attempt === 1) throw new Error('third failed')
  })
  const { post, lines, queueName } = await rig(t, router, [20])
  const jobId = await post('stripe', 'invoice.paid')
  await eventually('the second attempt', () => calls.length === 6)
  t.same(calls, ['a1', 'b1', 'c1', 'a2', 'b2', 'c2'], 'the handler that succeeded ran again too')
  const failed = lines.find((line) => line.msg === 'anvil worker: attempt failed')
  t.equal(failed?.obj.err, '2 of 3 handlers failed for stripe:invoice.paid: first failed; third failed')
  const queue = inspectQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  await eventually('completed', async () => await (await queue.getJob(jobId))?.isCompleted() === true)
})

t.test('when every failure is an UnrecoverableError, the job is not retried', async (t) => {
  let runs = 0
  const router = createRouter().on('stripe:charge.refunded', () => {
    runs++
    throw new UnrecoverableError('refund for an unknown charge')
  })
  const { post, queueName } = await rig(t, router, [20, 20])
  const jobId = await post('stripe', 'charge.refunded')
  const queue = inspectQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  await eventually('failed', async () => await (await queue.getJob(jobId))?.isFailed() === true)
  const job = await queue.getJob(jobId)
  t.same([runs, job?.attemptsMade], [1, 1])
  t.match(job?.failedReason, /1 of 1 handlers failed for stripe:charge.refunded: refund for an unknown charge/)
})

t.test('no on() handler matched: onUnhandled runs (then onAny); without one the job completes with a debug line', async (t) => {
  const calls: string[] = []
  const withUnhandled = createRouter()
    .on('stripe:invoice.paid', () => { calls.push('never') })
    .onUnhandled((event) => { calls.push(`unhandled ${event.name ?? ''}`) })
    .onAny(() => { calls.push('any') })
  const first = await rig(t, withUnhandled)
  await first.post('stripe', 'charge.refunded')
  await eventually('onAny', () => calls.length === 2)
  t.same(calls, ['unhandled stripe:charge.refunded', 'any'])

  const bare = createRouter().on('stripe:invoice.paid', () => {})
  const second = await rig(t, bare)
  const jobId = await second.post('stripe', 'payment_intent.succeeded')
  const queue = inspectQueue(redis.url, second.queueName)
  t.teardown(() => queue.close())
  await eventually('completed', async () => await (await queue.getJob(jobId))?.isCompleted() === true)
  t.match(second.lines.find((line) => line.level === 'debug' && line.msg === 'anvil router: no handler for this event; completed'),
    { obj: { jobId, source: 'stripe', name: 'stripe:payment_intent.succeeded' } })
})

t.test('source(): scoped handlers see only their source; unscoped ones see both', async (t) => {
  const calls: string[] = []
  const router = createRouter()
  router.source('stripe-eu').on('stripe:invoice.paid', (event) => { calls.push(`eu ${event.source}`) })
  router.on('stripe:invoice.paid', (event) => { calls.push(`all ${event.source}`) })
  const { post } = await rig(t, router)
  await post('stripe', 'invoice.paid', 'stripe')
  await eventually('the first event', () => calls.length === 1)
  await post('stripe', 'invoice.paid', 'stripe-eu')
  await eventually('the second event', () => calls.length === 3)
  t.same(calls, ['all stripe', 'eu stripe-eu', 'all stripe-eu'])
})

t.test('registration is refused once the worker started, and after a first dispatch; bad names and handlers are refused', async (t) => {
  const router = createRouter().on('github:push', () => {})
  await rig(t, router)
  t.throws(() => router.on('github:issues.opened', () => {}), { code: 'ANVIL_ERR_ROUTER_STARTED', message: /Cannot add a handler for github:issues.opened: the router is in use by a started worker/ })
  t.throws(() => router.source('x').onAny(() => {}), { code: 'ANVIL_ERR_ROUTER_STARTED' })

  const direct = createRouter()
  await direct(directEvent({ provider: 'anvil' }))
  t.throws(() => direct.onUnhandled(() => {}), { code: 'ANVIL_ERR_ROUTER_STARTED' })

  const fresh = createRouter()
  t.throws(() => fresh.on('strype:invoice.paid' as never, () => {}), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /"strype:invoice.paid" is not "<provider>:<eventType>"/ })
  t.throws(() => fresh.on('invoice.paid' as never, () => {}), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
  t.throws(() => fresh.on([], () => {}), /at least one event name/)
  t.throws(() => fresh.on('stripe:*', 'nope' as never), /must be a function/)
  t.throws(() => fresh.source(''), /give a source name/)
})

t.test('bodies the router parses: GitHub form hooks (payload field), Twilio forms, Discord interaction names, anvil body types', async (t) => {
  const seen: Array<[string | undefined, unknown]> = []
  const router = createRouter()
  router.onAny((event) => { seen.push([event.name, event.data]) })
  const form = new URLSearchParams({ payload: '{"action":"created","zen":"Keep it simple."}' }).toString()
  await router(directEvent({ provider: 'github', eventType: 'star', contentType: 'application/x-www-form-urlencoded', payload: Buffer.from(form) }))
  await router(directEvent({ provider: 'twilio', contentType: 'application/x-www-form-urlencoded', payload: Buffer.from('Body=hi&From=%2B1&Body=again') }))
  await router(directEvent({ provider: 'discord', eventType: '2', payload: Buffer.from('{"type":2}') }))
  await router(directEvent({ provider: 'anvil', payload: Buffer.from('{"type":"test.ping"}') }))
  t.same(seen, [
    ['github:star.created', { action: 'created', zen: 'Keep it simple.' }],
    [undefined, { Body: 'hi', From: '+1' }],
    ['discord:APPLICATION_COMMAND', { type: 2 }],
    ['anvil:test.ping', { type: 'test.ping' }]
  ])
  // A body that is not JSON: routed by its type, and `data` throws only when read.
  const broken = createRouter().on('stripe:*', (event) => event.data)
  await t.rejects(broken(directEvent({ provider: 'stripe', eventType: 'x', payload: Buffer.from('not json') })), /1 of 1 handlers failed for stripe:x/)
})

/** A WebhookEvent as the worker makes it (json() reads the given payload), for the few checks that call the router directly. */
function directEvent (fields: Partial<Parameters<Router>[0]>): Parameters<Router>[0] {
  const payload = fields.payload ?? Buffer.from('{}')
  return {
    id: 'e_direct', key: 'k', source: 'direct', headers: {}, receivedAt: new Date(), attempt: 1, maxAttempts: 5, isLastAttempt: false,
    json: <T>() => JSON.parse(payload.toString()) as T,
    ...fields,
    payload
  }
}
