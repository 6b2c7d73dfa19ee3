/**
 * Prometheus metrics: every counter moves exactly once per event, the histograms count every answer and
 * every handled job, the queue gauges read BullMQ, and a host registry gets Anvil's metrics with no route.
 */
import t from 'tap'
import Fastify from 'fastify'
import { Registry } from 'prom-client'
import { UnrecoverableError, Worker } from 'bullmq'
import anvil, { anvilMetrics, createWorker, instrument } from '../../index.js'
import { createReplayer } from '../../src/worker/replay.js'
import { Ingress } from '../../src/inbound/ingress.js'
import { resolveIngressOptions } from '../../src/inbound/ingress-options.js'
import { DEFAULT_PREFIX } from '../../src/shared/constants.js'
import { TestRedis } from '../helpers/redis.js'
import { SECRET, signed } from '../helpers/app.js'
import { signRequest } from '../../testing/index.js'
import { parseMetrics, sample } from '../helpers/metrics.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const ROUTE = { source: 'default', provider: 'anvil' }
const EVENT = { ...ROUTE, event_type: 'unknown' }

t.test('ingress counters, latency histogram and queue gauges on GET /metrics', async (t) => {
  const app = Fastify({ logger: false })
  await app.register(anvil, { redis: redis.url, secret: SECRET, queueName: 'metrics-ingress', bodyLimit: 64 })
  await app.register(anvilMetrics)
  await app.ready()
  t.teardown(() => app.close())

  t.equal((await app.inject(signed('{"id":"a"}'))).statusCode, 202)
  t.equal((await app.inject(signed('{"id":"a"}'))).statusCode, 202, 'a duplicate')
  t.equal((await app.inject(signed('{"id":"b"}', { 'x-signature': 'sha256=' + '0'.repeat(64) }))).statusCode, 401)
  t.equal((await app.inject(signed('{"id":"c"}', { 'x-signature': 'sha256=ABC' }))).statusCode, 401)
  t.equal((await app.inject(signed(JSON.stringify({ id: 'd', pad: 'x'.repeat(100) })))).statusCode, 413)

  const res = await app.inject({ method: 'GET', url: '/metrics' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain/)
  const m = parseMetrics(res.body)
  t.equal(sample(m, 'anvil_webhooks_received_total', ROUTE), 5)
  t.equal(sample(m, 'anvil_webhooks_verified_total', EVENT), 2, 'by event type: unknown where the preset reads none')
  t.equal(sample(m, 'anvil_events_received_total', EVENT), 2)
  t.equal(sample(m, 'anvil_webhooks_rejected_total', { ...ROUTE, reason: 'bad_signature' }), 1)
  t.equal(sample(m, 'anvil_webhooks_rejected_total', { ...ROUTE, reason: 'malformed' }), 1)
  t.equal(sample(m, 'anvil_webhooks_rejected_total', { ...ROUTE, reason: 'too_large' }), 1)
  t.equal(sample(m, 'anvil_events_enqueued_total', EVENT), 1)
  t.equal(sample(m, 'anvil_events_duplicate_total', EVENT), 1)
  t.equal(sample(m, 'anvil_ingress_duration_seconds_count', { ...ROUTE, status_code: '202' }), 2)
  t.equal(sample(m, 'anvil_ingress_duration_seconds_count', { ...ROUTE, status_code: '401' }), 2)
  t.equal(sample(m, 'anvil_ingress_duration_seconds_count', { ...ROUTE, status_code: '413' }), 1)
  t.equal(sample(m, 'anvil_queue_jobs', { queue: 'metrics-ingress', state: 'waiting' }), 1, 'sampled from BullMQ')
  t.equal(sample(m, 'anvil_dead_letters', { queue: 'metrics-ingress' }), 0)
  t.equal(sample(m, 'anvil_dead_letters_oldest_age_seconds', { queue: 'metrics-ingress' }), 0, 'no dead letter: 0')
  t.ok(sample(m, 'anvil_process_resident_memory_bytes') !== undefined || sample(m, 'anvil_nodejs_heap_size_used_bytes') !== undefined,
    'process metrics, prefixed')
  t.ok([...m.keys()].every((series) => series.startsWith('anvil_')), 'every name is prefixed anvil_')
})

t.test('verified and received events by the signed event type of the preset; requests refused before verifying by route only', async (t) => {
  const stripeSecret = 'whsec_metrics_by_type_0123456789'
  const app = Fastify({ logger: false })
  await app.register(anvil, { redis: redis.url, queueName: 'metrics-types', sources: [{ name: 'billing', path: '/stripe', provider: 'stripe', secrets: [stripeSecret] }] })
  await app.register(anvilMetrics, { queue: false })
  await app.ready()
  t.teardown(() => app.close())
  const send = async (id: string, type: string, secret = stripeSecret): Promise<number> => {
    const request = signRequest('stripe', { body: { id, object: 'event', type }, secret })
    return (await app.inject({ method: 'POST', url: '/stripe', headers: request.headers, payload: request.body })).statusCode
  }
  t.equal(await send('evt_1', 'invoice.paid'), 202)
  t.equal(await send('evt_2', 'invoice.paid'), 202)
  t.equal(await send('evt_2', 'invoice.paid'), 202, 'a duplicate is received and verified again')
  t.equal(await send('evt_3', 'customer.created'), 202)
  t.equal(await send('evt_4', 'forged.type', 'whsec_not_the_secret_0123456789'), 401)
  const m = parseMetrics((await app.inject({ url: '/metrics' })).body)
  const route = { source: 'billing', provider: 'stripe' }
  t.equal(sample(m, 'anvil_webhooks_received_total', route), 5, 'every request, counted on arrival: no type yet')
  for (const [name, paid, created] of [['anvil_webhooks_verified_total', 3, 1], ['anvil_events_received_total', 3, 1], ['anvil_events_enqueued_total', 2, 1]] as const) {
    t.equal(sample(m, name, { ...route, event_type: 'invoice.paid' }), paid, `${name} invoice.paid`)
    t.equal(sample(m, name, { ...route, event_type: 'customer.created' }), created, `${name} customer.created`)
    t.equal(sample(m, name, { ...route, event_type: 'forged.type' }), undefined, `${name}: an unverified type is never a label`)
  }
  t.equal(sample(m, 'anvil_events_duplicate_total', { ...route, event_type: 'invoice.paid' }), 1)
})

t.test('worker counters: processed, failed attempts, dead-lettered, replayed; received → handled histogram; DLQ gauge', async (t) => {
  const queueName = 'metrics-worker'
  const app = Fastify({ logger: false })
  await app.register(anvil, { redis: redis.url, secret: SECRET, queueName, retrySchedule: [10] })
  await app.register(anvilMetrics, { path: '/internal/metrics' })
  await app.ready()
  t.teardown(() => app.close())
  const worker = createWorker((event) => {
    if (event.eventId === 'evt_ok') return
    if (event.eventId === 'evt_flaky' && event.attempt === 2) return
    throw event.eventId === 'evt_dead' ? new UnrecoverableError('no') : new Error('try again')
  }, { redis: redis.url, queueName, sweepIntervalMs: 0 })
  t.teardown(() => worker.close())
  await worker.start()

  for (const eventId of ['evt_ok', 'evt_flaky', 'evt_dead']) await app.anvil.enqueue({ id: eventId }, { eventId, eventType: 'test.kind' })
  const scrape = async (): Promise<Map<string, number>> =>
    parseMetrics((await app.inject({ method: 'GET', url: '/internal/metrics' })).body)
  const labels = { source: 'default', provider: 'app', event_type: 'test.kind' }
  await eventually('sample(m, \'anvil_jobs_processed_total\', labels) === 2 && sample(m, \'a…', async () => {
    const m = await scrape()
    return sample(m, 'anvil_jobs_processed_total', labels) === 2 && sample(m, 'anvil_jobs_dead_lettered_total', labels) === 1
  })
  let m = await scrape()
  t.equal(sample(m, 'anvil_events_enqueued_total', labels), 3)
  t.equal(sample(m, 'anvil_job_attempts_failed_total', labels), 2, 'the flaky first attempt and the dead one')
  t.equal(sample(m, 'anvil_received_to_handled_seconds_count', labels), 2)
  t.equal(sample(m, 'anvil_dead_letters', { queue: queueName }), 1)
  const age = sample(m, 'anvil_dead_letters_oldest_age_seconds', { queue: queueName }) ?? -1
  t.ok(age >= 0 && age < 600, `the oldest dead letter's age (${age} s)`)

  const replayer = createReplayer({ redis: redis.url, queueName })
  t.teardown(() => replayer.close())
  const [letter] = await replayer.listDeadLetters()
  await replayer.replayDeadLetter(letter?.id as string)
  m = await scrape()
  t.equal(sample(m, 'anvil_dead_letters_replayed_total', labels), 1)
  t.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404, 'only the configured path')
})

t.test('a dead letter written by the sweep (its worker died before its listener ran) is counted, once', async (t) => {
  const queueName = 'metrics-sweep'
  const registry = new Registry()
  const stop = instrument(registry)
  t.teardown(stop)
  // A plain BullMQ worker fails the job for good: Anvil's failed listener never runs, as if its process died.
  const ingress = new Ingress(resolveIngressOptions({ redis: redis.url, secret: SECRET, queueName, retrySchedule: [] }))
  t.teardown(() => ingress.close())
  const { jobId } = await ingress.enqueue({ id: 'evt_swept' }, { eventId: 'evt_swept', eventType: 'test.kind' })
  const plain = new Worker(queueName, async () => { throw new Error('no') }, { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: DEFAULT_PREFIX })
  await eventually('plain.isRunning() && ingress.queue.queue.getJobState(jobId) === \'fail…', async () => await plain.isRunning() && await ingress.queue.queue.getJobState(jobId) === 'failed')
  await plain.close()

  const worker = createWorker(() => {}, { redis: redis.url, queueName, sweepIntervalMs: 0 })
  t.teardown(() => worker.close())
  await worker.start() // runs the first sweep
  await worker.sweep() // finds it again: already there, not counted again
  const labels = { source: 'default', provider: 'app', event_type: 'test.kind' }
  t.equal(sample(parseMetrics(await registry.metrics()), 'anvil_jobs_dead_lettered_total', labels), 1)
})

t.test("a host registry: Anvil's metrics join it, no second endpoint; a second app reuses the metrics", async (t) => {
  const registry = new Registry()
  const apps = await Promise.all(['host-a', 'host-b'].map(async (queueName) => {
    const app = Fastify({ logger: false })
    await app.register(anvil, { redis: redis.url, secret: SECRET, queueName })
    await app.register(anvilMetrics, { registry, queue: false })
    await app.ready()
    t.teardown(() => app.close())
    return app
  }))
  for (const app of apps) t.equal((await app.inject(signed('{"id":"host"}'))).statusCode, 202)
  t.equal((await apps[0]!.inject({ method: 'GET', url: '/metrics' })).statusCode, 404)
  const m = parseMetrics(await registry.metrics())
  t.equal(sample(m, 'anvil_events_enqueued_total', EVENT), 2, 'one series, both apps')
  t.equal(sample(m, 'anvil_queue_jobs', { queue: 'host-a', state: 'waiting' }), undefined, 'queue: false samples nothing')
  t.notOk([...m.keys()].some((series) => series.startsWith('anvil_process_')), 'no process metrics forced on the host')
})

t.test('a host registry used again: after the apps close, and after registry.clear(), a new app counts and samples', async (t) => {
  const registry = new Registry()
  const register = async (queueName: string): Promise<ReturnType<typeof Fastify>> => {
    const app = Fastify({ logger: false })
    await app.register(anvil, { redis: redis.url, secret: SECRET, queueName })
    await app.register(anvilMetrics, { registry })
    await app.ready()
    return app
  }
  const first = await register('host-again-1')
  t.equal((await first.inject(signed('{"id":"again-1"}'))).statusCode, 202)
  await first.close()
  // The metrics stay on the registry; the new app's events add to them and its queue is the one sampled.
  const second = await register('host-again-2')
  t.equal((await second.inject(signed('{"id":"again-2"}'))).statusCode, 202)
  let m = parseMetrics(await registry.metrics())
  t.equal(sample(m, 'anvil_webhooks_received_total', ROUTE), 2)
  t.equal(sample(m, 'anvil_queue_jobs', { queue: 'host-again-2', state: 'waiting' }), 1, 'the new app\'s queue is sampled')
  t.equal(sample(m, 'anvil_queue_jobs', { queue: 'host-again-1', state: 'waiting' }), undefined, 'the closed one\'s is not')
  await second.close()
  // A host that clears its registry and registers again gets every metric back, counting from zero.
  registry.clear()
  const third = await register('host-again-3')
  t.teardown(() => third.close())
  t.equal((await third.inject(signed('{"id":"again-3"}'))).statusCode, 202)
  m = parseMetrics(await registry.metrics())
  t.equal(sample(m, 'anvil_webhooks_received_total', ROUTE), 1)
  t.equal(sample(m, 'anvil_ingress_duration_seconds_count', { ...ROUTE, status_code: '202' }), 1)
})

t.test('after close, the app stops counting; bad options fail registration with one line', async (t) => {
  const registry = new Registry()
  const app = Fastify({ logger: false })
  await app.register(anvil, { redis: redis.url, secret: SECRET, queueName: 'metrics-closed' })
  await app.register(anvilMetrics, { registry, queue: false })
  await app.ready()
  await app.close()
  const other = Fastify({ logger: false })
  await other.register(anvil, { redis: redis.url, secret: SECRET, queueName: 'metrics-closed' })
  await other.ready()
  t.teardown(() => other.close())
  await other.inject(signed('{"id":"unseen"}'))
  t.equal(sample(parseMetrics(await registry.metrics()), 'anvil_webhooks_received_total', ROUTE), undefined)

  const bad = Fastify({ logger: false })
  await t.rejects(async () => { await bad.register(anvilMetrics, { path: 'metrics' }); await bad.ready() }, { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /path/ })
})
