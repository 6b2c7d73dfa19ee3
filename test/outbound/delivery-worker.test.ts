import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { Queue, QueueEvents, type Job } from 'bullmq'
import { Webhook } from 'standardwebhooks'
import { Redis } from 'ioredis'
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { createDeliveryWorker, type DeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { createEndpointRateLimit } from '../../src/delivery/endpoint-rate-limit.js'
import { deliveryJobOptions, scheduleOf, STANDARD_WEBHOOKS_SCHEDULE_MS } from '../../src/delivery/delivery-schedule.js'

import type { DeliveryWorkerOptions } from '../../src/delivery/delivery-options.js'
import type { OutboundJobData } from '../../src/delivery/delivery-job.js'
import { sha256Hex } from '../../src/signing/crypto.js'
import { TestRedis } from '../helpers/redis.js'
import { startReceiver, type Receiver } from '../helpers/receiver.js'
import { TestDatabase } from '../helpers/pg.js'
import { PgDeliveryStore } from '../helpers/pg-delivery-store.js'
import type { DeliveryStore } from '../../src/delivery/delivery-job.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const database = beforeAll(t, async () => await TestDatabase.create(), async (database) => await database.drop())
/** One migrated schema for the file; each setup empties it (the tests run one after another). */
const stores = beforeAll(t, async () => await PgDeliveryStore.create(database))
const newSecret = (): string => 'whsec_' + randomBytes(32).toString('base64')
let queueCount = 0

interface Setup { queue: Queue<OutboundJobData>, events: QueueEvents, worker: DeliveryWorker, store: PgDeliveryStore, queueName: string }

/** A delivery worker on a queue of its own, its store in PostgreSQL (`store`, the file's schema emptied) or, as in forward mode, a bare `DeliveryStore`. */
async function setup (t: Test, options: Partial<DeliveryWorkerOptions> = {}, bare?: DeliveryStore): Promise<Setup> {
  const store = await stores.fresh()
  const queueName = `out${++queueCount}`
  const connection = { url: redis.url, maxRetriesPerRequest: null }
  const queue = new Queue<OutboundJobData>(queueName, { connection, prefix: '{t}' })
  const events = new QueueEvents(queueName, { connection, prefix: '{t}' })
  const worker = createDeliveryWorker({ redis: redis.url, store: bare ?? store.store, queueName, prefix: '{t}', allowNets: '127.0.0.0/8', jitter: 0, ...options })
  await worker.start()
  await events.waitUntilReady()
  t.teardown(async () => {
    await worker.close()
    await events.close()
    await queue.close()
  })
  return { queue, events, worker, store, queueName }
}

function envelope (id: string, type = 'invoice.paid'): string {
  return JSON.stringify({ id, type, timestamp: new Date().toISOString(), data: { n: 1 } })
}

async function deliver (s: Setup, receiver: Receiver, messageId: string, endpointId = 'ep_a', schedule: readonly number[] = [], path = '/hook'): Promise<Job<OutboundJobData>> {
  return await s.queue.add('deliver', {
    messageId, endpointId, eventType: 'invoice.paid', url: receiver.url + path, body: envelope(messageId), scheme: 'standard-webhooks', retry: [...schedule]
  }, { jobId: `${messageId}.${endpointId}`, ...deliveryJobOptions(schedule) })
}

/** Settles with the job's final state. */
async function finished (s: Setup, job: Job<OutboundJobData>): Promise<'completed' | 'failed'> {
  return await job.waitUntilFinished(s.events).then(() => 'completed' as const, () => 'failed' as const)
}

t.test('a delivery is signed, POSTed, and its attempt recorded', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.end('thanks') })
  t.teardown(() => receiver.close())
  const secret = newSecret()
  const seen: unknown[] = []
  const s = await setup(t, { onAttempt: (attempt) => { seen.push(attempt); throw new Error('a hook that throws') } })
  await s.store.add('ep_a', [secret])
  const job = await deliver(s, receiver, 'msg_ok')
  t.equal(await finished(s, job), 'completed')
  const [request] = receiver.received
  t.same(new Webhook(secret).verify(request?.body ?? '', request?.headers as Record<string, string>), JSON.parse(job.data.body))
  t.equal(request?.headers['content-type'], 'application/json')
  t.match(await s.store.attempts(), [{ messageId: 'msg_ok', endpointId: 'ep_a', attempt: 1, httpStatus: 200, success: true, responseHead: 'thanks', payloadSha256: sha256Hex(job.data.body) }])
  t.equal(seen.length, 1, 'the hook ran; its throw did not fail the delivery')
})

t.test('failures retry on the schedule, in order, until success; the last attempt fails the job', async (t) => {
  let answered = 0
  const receiver = await startReceiver((req, res) => {
    res.statusCode = req.url === '/always-down' ? 500 : ++answered <= 2 ? 503 : 200
    res.end()
  })
  t.teardown(() => receiver.close())
  const s = await setup(t)
  // What the worker's strategy asks BullMQ for, seen as it answers (jitter 0): the delays, not how long they took.
  const settings = s.worker.worker.opts.settings
  const strategy = settings?.backoffStrategy
  if (settings === undefined || strategy === undefined) throw new Error('the delivery worker has no backoff strategy')
  const asked: Array<{ job: string | undefined, delay: number }> = []
  settings.backoffStrategy = async (attemptsMade, type, err, job) => {
    const delay = await strategy(attemptsMade, type, err, job)
    asked.push({ job: job?.id, delay })
    return delay
  }
  await s.store.add('ep_a', [newSecret()])
  const job = await deliver(s, receiver, 'msg_retry', 'ep_a', [20, 40, 80])
  t.equal(await finished(s, job), 'completed')
  const attempts = await s.store.attempts('ep_a')
  t.same(attempts.map((a) => [a.attempt, a.httpStatus, a.success]), [[1, 503, false], [2, 503, false], [3, 200, true]])
  t.same(asked, [{ job: job.id, delay: 20 }, { job: job.id, delay: 40 }], 'each retry delayed by its step of the schedule')

  await s.store.add('ep_b', [newSecret()])
  const doomed = await deliver(s, receiver, 'msg_doomed', 'ep_b', [20], '/always-down')
  t.equal(await finished(s, doomed), 'failed')
  t.same((await s.store.attempts('ep_b')).map((a) => [a.attempt, a.errorClass]), [[1, 'http_5xx'], [2, 'http_5xx']])
  const failed = await s.queue.getJob(doomed.id as string)
  t.equal(failed?.attemptsMade, 2)
  t.equal(await failed?.getState(), 'failed', 'after the last attempt the delivery is failed and visible')
})

t.test('each job carries its schedule: one worker retries each job on its own delays, the publisher\'s setting being the only one', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.statusCode = 503; res.end() })
  t.teardown(() => receiver.close())
  const s = await setup(t)
  await s.store.add('ep_a', [newSecret()])
  const jobs = [await deliver(s, receiver, 'msg_short', 'ep_a', [1234]), await deliver(s, receiver, 'msg_long', 'ep_a', [3_600_000, 60_000])]
  const delayed = async (): Promise<Array<Job<OutboundJobData> | undefined>> => await Promise.all(jobs.map(async (job) => await s.queue.getJob(job.id as string)))
  await eventually('both jobs wait for their retry', async () => (await delayed()).every((job) => job?.attemptsMade === 1 && job.delay > 0))
  t.same((await delayed()).map((job) => job?.delay), [1234, 3_600_000], 'the delay each job carries (no jitter in this worker)')
})

t.test('a job made before jobs carried a schedule is retried on Standard Webhooks\' delays for as many attempts as it was given, and delivered', async (t) => {
  let answered = 0
  const receiver = await startReceiver((_req, res) => { res.statusCode = ++answered === 1 ? 503 : 200; res.end() })
  t.teardown(() => receiver.close())
  const s = await setup(t)
  await s.store.add('ep_old', [newSecret()])
  // As a publisher of an earlier release wrote it: the attempts, no `retry` in its data.
  const job = await s.queue.add('deliver', {
    messageId: 'msg_old', endpointId: 'ep_old', eventType: 'invoice.paid', url: `${receiver.url}/hook`, body: envelope('msg_old'), scheme: 'standard-webhooks'
  }, { jobId: 'msg_old.ep_old', ...deliveryJobOptions([0, 0, 0]) })
  await eventually('the first attempt failed and the job waits', async () => (await s.queue.getJob('msg_old.ep_old'))?.delay === 5000)
  await (await s.queue.getJob('msg_old.ep_old'))?.promote()
  t.equal(await finished(s, job), 'completed', 'delivered by its retry')
  t.same((await s.store.attempts('ep_old')).map((a) => [a.attempt, a.success]), [[1, false], [2, true]])
  t.same(scheduleOf({ data: {}, opts: { attempts: 12 } }), [...STANDARD_WEBHOOKS_SCHEDULE_MS, 86_400_000, 86_400_000], 'past Standard Webhooks\' nine steps, its last one')
  t.same(scheduleOf({ data: {}, opts: { attempts: 3 } }), [5000, 300_000], 'and no more steps than its attempts')
})

t.test('410 disables the endpoint, once, and fails the job without retry', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.statusCode = 410; res.end() })
  t.teardown(() => receiver.close())
  const disabled: unknown[] = []
  const s = await setup(t, { onEndpointDisabled: (event) => disabled.push(event) })
  await s.store.add('ep_a', [newSecret()])
  const job = await deliver(s, receiver, 'msg_gone', 'ep_a', [50, 50])
  t.equal(await finished(s, job), 'failed')
  t.equal((await s.store.attempts('ep_a')).length, 1, 'no retry')
  t.same(disabled, [{ endpointId: 'ep_a', reason: 'the endpoint answered 410 Gone' }])
  t.equal(await s.store.enabled('ep_a'), false)
  const next = await deliver(s, receiver, 'msg_after', 'ep_a')
  t.equal(await finished(s, next), 'failed')
  t.equal(receiver.received.length, 1, 'a disabled endpoint is not called')
  t.match((await s.store.attempts('ep_a'))[1], { errorClass: 'endpoint_disabled', success: false })
})

t.test("429 with Retry-After waits what the receiver asked", async (t) => {
  let answered = 0
  const receiver = await startReceiver((_req, res) => {
    if (++answered === 1) res.writeHead(429, { 'retry-after': '1' }).end()
    else res.end()
  })
  t.teardown(() => receiver.close())
  const s = await setup(t)
  await s.store.add('ep_a', [newSecret()])
  const job = await deliver(s, receiver, 'msg_429', 'ep_a', [10])
  t.equal(await finished(s, job), 'completed')
  const [first, second] = await s.store.attempts('ep_a')
  t.equal(first?.httpStatus, 429)
  t.ok((second?.at ?? 0) - (first?.at ?? 0) >= 900, 'the retry came after the second asked for, not the 10 ms scheduled')
})

t.test('a hanging receiver times out; an address not allowlisted is refused', async (t) => {
  const receiver = await startReceiver(() => {})
  t.teardown(() => receiver.close())
  const s = await setup(t, { timeoutMs: 100 })
  await s.store.add('ep_a', [newSecret()])
  t.equal(await finished(s, await deliver(s, receiver, 'msg_hang')), 'failed')
  t.match(await s.store.attempts('ep_a'), [{ errorClass: 'timeout', success: false }])

  const strict = await setup(t, { allowNets: undefined })
  await strict.store.add('ep_s', [newSecret()])
  t.equal(await finished(strict, await deliver(strict, receiver, 'msg_ssrf', 'ep_s')), 'failed')
  t.match(await strict.store.attempts('ep_s'), [{ errorClass: 'ssrf', success: false }])
  t.equal(receiver.received.length, 1, 'only the allowlisted delivery reached the receiver')
})

t.test('an endpoint that has only failed for the configured time is disabled', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.statusCode = 500; res.end() })
  t.teardown(() => receiver.close())
  const disabled: unknown[] = []
  const s = await setup(t, { onEndpointDisabled: (event) => disabled.push(event), disableAfterMs: 5 * 24 * 3_600_000 })
  const since = new Date(Date.now() - 6 * 24 * 3_600_000)
  await s.store.add('ep_a', [newSecret()], { failingSince: since })
  await s.store.add('ep_b', [newSecret()], { failingSince: new Date(Date.now() - 3_600_000) })
  t.equal(await finished(s, await deliver(s, receiver, 'msg_1', 'ep_a', [50, 50])), 'failed')
  t.equal((await s.store.attempts('ep_a')).length, 1, 'disabled at once, no more retries')
  t.same(disabled, [{ endpointId: 'ep_a', reason: `only failures since ${since.toISOString()}` }])
  t.equal(await finished(s, await deliver(s, receiver, 'msg_2', 'ep_b', [50])), 'failed')
  t.equal((await s.store.attempts('ep_b')).length, 2, 'failing for an hour only: retried, kept')
  t.equal(await s.store.enabled('ep_b'), true)
})

t.test('the circuit opens on a failing endpoint, its jobs wait, the others flow, and a probe closes it', async (t) => {
  let healthy = false
  const receiver = await startReceiver((req, res) => {
    res.statusCode = req.url === '/bad' && !healthy ? 500 : 200
    res.end()
  })
  t.teardown(() => receiver.close())
  const changes: unknown[] = []
  const onCircuit = (message: unknown): void => { changes.push(message) }
  subscribe('anvil:outbound:circuit', onCircuit)
  t.teardown(() => unsubscribe('anvil:outbound:circuit', onCircuit))
  const s = await setup(t, { circuit: { failureThreshold: 2, openMs: 1000 }, concurrency: 1 })
  await s.store.add('ep_bad', [newSecret()])
  await s.store.add('ep_good', [newSecret()])
  const bad = await Promise.all(['m1', 'm2', 'm3', 'm4'].map(async (id) => await deliver(s, receiver, id, 'ep_bad', [100, 100, 100, 100, 100, 100], '/bad')))
  const good = await Promise.all(['g1', 'g2', 'g3'].map(async (id) => await deliver(s, receiver, id, 'ep_good')))
  t.same(await Promise.all(good.map(async (job) => await finished(s, job))), ['completed', 'completed', 'completed'], 'the healthy endpoint is served')
  await eventually('the circuit of ep_bad reported', async () => changes.length > 0)
  t.same(changes, [{ endpointId: 'ep_bad', open: true }], 'opened')
  const whileOpen = (await s.store.attempts('ep_bad')).length
  t.ok(whileOpen <= 3, `open: the failing endpoint is not called for every job (${whileOpen} attempts)`)
  t.ok((await s.queue.getDelayedCount()) >= 1, 'its jobs wait as delayed')
  healthy = true
  t.same(await Promise.all(bad.map(async (job) => await finished(s, job))), ['completed', 'completed', 'completed', 'completed'])
  t.same(changes.at(-1), { endpointId: 'ep_bad', open: false }, 'a probe closed it')
})

t.test('a per-endpoint rate limit lets its count through in a window and gives the rest the time to try again', async (t) => {
  const client = new Redis(redis.url)
  t.teardown(() => client.quit())
  const limit = createEndpointRateLimit(client, '{limit}')
  const now = 1_000_000
  // Asked at once, the five land in one window of the limiter's (its clock is Redis's); `now` is the caller's.
  const answers = await Promise.all(Array.from({ length: 5 }, async () => await limit.take('ep_a', 2, now)))
  t.equal(answers.filter((at) => at === undefined).length, 2, 'two of five go now')
  const later = answers.filter((at): at is number => at !== undefined)
  t.equal(later.length, 3)
  for (const at of later) t.ok(at > now && at <= now + 1000, `the others try again within the window's second (${at - now} ms)`)
  t.equal(await limit.take('ep_b', 2, now), undefined, 'another endpoint has a window of its own')
})

t.test('a delivery over its endpoint\'s rate limit is put back as delayed, not failed, then delivered once', async (t) => {
  const receiver = await startReceiver()
  t.teardown(() => receiver.close())
  const s = await setup(t)
  await s.store.add('ep_a', [newSecret()], { rateLimit: 2 })
  const client = new Redis(redis.url)
  t.teardown(() => client.quit())
  // ep_a's window used up for a minute, on the limiter the worker consults (its key: the prefix, the rate, the endpoint)
  const window = new RateLimiterRedis({ storeClient: client, keyPrefix: '{t}:outbound:rate:2', points: 2, duration: 1 })
  await window.block('ep_a', 60)
  const jobs = await Promise.all(['r1', 'r2', 'r3', 'r4', 'r5'].map(async (id) => await deliver(s, receiver, id)))
  await eventually('the five deliveries put back as delayed', async () => await s.queue.getDelayedCount() === 5)
  t.equal(receiver.received.length, 0, 'none POSTed while the window is used up')
  t.same(await s.store.attempts('ep_a'), [], 'and no attempt counted')
  await window.delete('ep_a')
  for (const job of await s.queue.getDelayed()) await job.promote()
  t.same(new Set(await Promise.all(jobs.map(async (job) => await finished(s, job)))), new Set(['completed']))
  t.same(receiver.received.map((r) => JSON.parse(r.body).id).sort(), ['r1', 'r2', 'r3', 'r4', 'r5'], 'each delivered once')
})

t.test('without a delivery log, attempts go to the job log', async (t) => {
  const receiver = await startReceiver()
  t.teardown(() => receiver.close())
  const secret = newSecret()
  const s = await setup(t, {}, { loadSecrets: async () => [secret] })
  const job = await deliver(s, receiver, 'msg_log')
  t.equal(await finished(s, job), 'completed')
  const { logs } = await s.queue.getJobLogs(job.id as string)
  t.match(JSON.parse(logs[0] ?? '{}'), { messageId: 'msg_log', attempt: 1, httpStatus: 200, success: true })
})

t.test('options are checked', async (t) => {
  const base = { redis: redis.url, store: stores.store }
  t.throws(() => createDeliveryWorker({ ...base, timeoutMs: 0 }), /timeoutMs/)
  t.throws(() => createDeliveryWorker({ ...base, allowNets: '10.0.0.0/99' }), /allowNets: .*prefix length/)
  t.throws(() => createDeliveryWorker({ ...base, store: {} as DeliveryStore }), /store: must have a loadSecrets/)
  t.throws(() => createDeliveryWorker({ ...base, retrySchedule: [10] } as DeliveryWorkerOptions), /retrySchedule/, 'the schedule is the publisher\'s, carried by each job: not a worker setting')
  t.throws(() => createDeliveryWorker({ ...base, bogus: 1 } as DeliveryWorkerOptions), /bogus/)
})
