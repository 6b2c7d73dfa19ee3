import t from 'tap'
import { DelayedError, Queue, Worker } from 'bullmq'
import { createCircuitBreaker } from '../../src/delivery/circuit-breaker.js'
import { createEndpointRateLimit } from '../../src/delivery/endpoint-rate-limit.js'
import { createEndpointGate } from '../../src/delivery/endpoint-gate.js'
import { OUTBOUND_JOB_NAME, type OutboundJobData } from '../../src/delivery/delivery-job.js'
import { createGuardedDispatcher } from '../../src/send/guarded-dispatcher.js'
import { runAttempt } from '../../src/delivery/run-attempt.js'
import { silentLogger } from '../../src/shared/logger.js'

import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const client = beforeAll(t, async () => redis.client(), (client) => client.disconnect())
const other = beforeAll(t, async () => redis.client(), (client) => client.disconnect())

const settings = { failureThreshold: 3, openMs: 30_000, probeLeaseMs: 15_000 }

t.test('the circuit opens after consecutive failures, shared by processes, and a probe closes it', async (t) => {
  const a = createCircuitBreaker(client, '{t1}', settings)
  const b = createCircuitBreaker(other, '{t1}', settings)
  const now = 1_000_000
  const first = await a.admit('ep_1', now)
  t.same(first, { send: true, probe: false, dirty: false })
  t.equal(await a.record('ep_1', true, { probe: false, dirty: false }, now), undefined)
  t.equal(await client.exists('{t1}:outbound:circuit:ep_1'), 0, 'a clean success writes nothing')

  t.equal(await a.record('ep_1', false, { probe: false, dirty: false }, now), undefined)
  t.equal(await b.record('ep_1', false, { probe: false, dirty: true }, now), undefined)
  // A success between failures resets the count: only consecutive failures open it.
  t.equal(await a.record('ep_1', true, { probe: false, dirty: true }, now), undefined)
  for (let i = 0; i < 2; i++) t.equal(await a.record('ep_1', false, { probe: false, dirty: true }, now), undefined)
  t.equal(await b.record('ep_1', false, { probe: false, dirty: true }, now), 'opened', 'the third consecutive failure, in another process')
  t.equal(await a.record('ep_1', false, { probe: false, dirty: true }, now), undefined, 'opened once')

  const before = Date.now()
  const waiting = await a.admit('ep_1', now + 1000)
  t.equal(waiting.send, false, 'open: jobs wait')
  if (!waiting.send) t.ok(waiting.retryAt >= before + 29_000 && waiting.retryAt < Date.now() + 30_000, 'what is left of the window (29 s), from this process\'s now')
  t.same(await a.admit('ep_2', now), { send: true, probe: false, dirty: false }, 'other endpoints are untouched')

  const probe = await b.admit('ep_1', now + 30_000)
  t.same(probe, { send: true, probe: true, dirty: true }, 'half-open: one probe')
  const second = await a.admit('ep_1', now + 30_001)
  t.equal(second.send, false, 'while the probe is out, the others wait')
  t.equal(await b.record('ep_1', false, { probe: true, dirty: true }, now + 31_000), undefined, 'a failed probe re-opens')
  t.equal((await a.admit('ep_1', now + 32_000)).send, false)
  const probeAgain = await a.admit('ep_1', now + 61_000)
  t.same(probeAgain, { send: true, probe: true, dirty: true })
  t.equal(await a.record('ep_1', true, { probe: true, dirty: true }, now + 61_500), 'closed', 'a successful probe closes it')
  t.same(await b.admit('ep_1', now + 62_000), { send: true, probe: false, dirty: false })
})

t.test('the per-endpoint rate limit holds across clients', async (t) => {
  const a = createEndpointRateLimit(client, '{t2}')
  const b = createEndpointRateLimit(other, '{t2}')
  const now = Date.now()
  const taken = [await a.take('ep_1', 3, now), await b.take('ep_1', 3, now), await a.take('ep_1', 3, now)]
  t.same(taken, [undefined, undefined, undefined], 'three per second pass')
  const fourth = await b.take('ep_1', 3, now)
  t.ok(fourth !== undefined && fourth > now && fourth <= now + 1000, 'the fourth waits for the next second')
  t.equal(await a.take('ep_2', 3, now), undefined, 'per endpoint')
})

t.test('a clean read is trusted for a while in this process; a local failure asks Redis again', async (t) => {
  const a = createCircuitBreaker(client, '{t3}', { ...settings, failureThreshold: 1, cleanCacheMs: 60_000 })
  const b = createCircuitBreaker(other, '{t3}', { ...settings, failureThreshold: 1 })
  const now = 5_000_000
  t.same(await a.admit('ep_1', now), { send: true, probe: false, dirty: false })
  t.equal(await b.record('ep_1', false, { probe: false, dirty: false }, now), 'opened', 'another process opens it')
  t.same(await a.admit('ep_1', now + 1), { send: true, probe: false, dirty: false }, 'this one still trusts its clean read')
  t.equal((await b.admit('ep_1', now + 1)).send, false)
  await a.record('ep_1', false, { probe: false, dirty: false }, now + 2)
  t.equal((await a.admit('ep_1', now + 3)).send, false, 'after its own failure it reads Redis: open')
})

t.test('the per-endpoint bulkhead: shares are earned by quick answers, a fast endpoint waits its turn, a slow one sends jobs back', async (t) => {
  const gate = createEndpointGate({ maxInFlight: 2, slowAfterMs: 200, timeoutMs: 10_000 })
  const first = await gate.enter('ep_1')
  t.ok('release' in first, 'a new endpoint: one at once')
  t.ok('release' in await gate.enter('ep_2'), 'other endpoints are not counted')
  let entered = false
  const waiting = Promise.resolve(gate.enter('ep_1')).then((entry) => { entered = true; return entry })
  await new Promise((resolve) => setImmediate(resolve))
  t.notOk(entered, 'over its share: waits')
  if ('release' in first) first.release()
  const second = await waiting
  t.ok('release' in second, 'a release lets the next one in')
  const third = await gate.enter('ep_1')
  t.ok('release' in second && 'release' in third, 'a quick answer earned a second slot: up to the cap at once')
  // Neither of the two in flight comes back: the endpoint is slow past slowAfterMs, and the next job is sent back.
  const before = Date.now()
  const fourth = await gate.enter('ep_1')
  t.ok('retryAt' in fourth, 'slow: told to come back')
  if ('retryAt' in fourth) t.ok(fourth.retryAt >= before + 150 && fourth.retryAt <= Date.now() + 11_000, 'later, by about how long the endpoint has sat on its oldest')
  // Released well past slowAfterMs: a slow delivery.
  await new Promise((resolve) => setTimeout(resolve, 50))
  if ('release' in second) { second.release(); second.release() }
  const fifth = await gate.enter('ep_1')
  t.ok('retryAt' in fifth, 'its last delivery was slow: one in flight, the next sent back at once, holding no slot')
  if ('release' in third) third.release()
  t.ok('release' in await gate.enter('ep_1'), 'free again once released (a second release is a no-op)')
})

t.test('the adaptive bulkhead: a lone endpoint may fill every slot; a second endpoint brings the cap back', async (t) => {
  const gate = createEndpointGate({ maxInFlight: 2, slowAfterMs: 200, timeoutMs: 10_000, soloMaxInFlight: 4, recentMs: 10_000 })
  const entries = [gate.enter('ep_1'), gate.enter('ep_1'), gate.enter('ep_1')]
  t.ok(entries.every((entry) => 'release' in entry), 'alone: past the cap, synchronously')
  t.ok('release' in gate.enter('ep_2'), 'a second endpoint is under its cap')
  let entered = false
  const waiting = Promise.resolve(gate.enter('ep_1')).then((entry) => { entered = true; return entry })
  await new Promise((resolve) => setImmediate(resolve))
  t.notOk(entered, 'two endpoints active: the first is over the cap and waits')
  for (const entry of entries) if ('release' in entry) entry.release()
  const admitted = await waiting
  t.ok('release' in admitted, 'admitted once under the cap')
  if ('release' in admitted) admitted.release()
})

t.test('a job put back without a POST (its circuit open) earns its endpoint no share of the bulkhead', async (t) => {
  const prefix = '{t9}'
  const gate = createEndpointGate({ maxInFlight: 4, slowAfterMs: 10_000, timeoutMs: 10_000 })
  const circuit = createCircuitBreaker(client, prefix, { ...settings, failureThreshold: 1 })
  t.equal(await circuit.record('ep_open', false, { probe: false, dirty: false }), 'opened')
  const dispatcher = createGuardedDispatcher({ allowNets: '127.0.0.0/8', connectTimeoutMs: 1000 })
  const deps = {
    store: { loadSecrets: async () => ['whsec_' + Buffer.alloc(24, 7).toString('base64')] },
    send: { dispatcher, timeoutMs: 1000, responseCapBytes: 1024, bodyTimeoutMs: 1000 },
    httpsOnly: false,
    circuit,
    gate,
    disableAfterMs: 0,
    log: silentLogger
  }
  let putBack = 0
  const workerClient = redis.client()
  const queueClient = redis.client()
  const worker = new Worker<OutboundJobData>('gate-put-back', async (job, token) => {
    try {
      await runAttempt(job, token, deps)
    } catch (err) {
      if (err instanceof DelayedError) putBack++
      throw err
    }
  }, { connection: workerClient, prefix, concurrency: 1 })
  const queue = new Queue<OutboundJobData>('gate-put-back', { connection: queueClient, prefix })
  t.teardown(async () => {
    await worker.close()
    await queue.close()
    await dispatcher.close()
    workerClient.disconnect()
    queueClient.disconnect()
  })
  const data = (i: number): OutboundJobData => ({ messageId: `msg_${i}`, endpointId: 'ep_open', eventType: 'order.paid', url: 'http://127.0.0.1:9/hook', body: '{}', scheme: 'standard-webhooks' })
  await queue.addBulk(Array.from({ length: 4 }, (_, i) => ({ name: OUTBOUND_JOB_NAME, data: data(i) })))
  await eventually('putBack === 4', async () => putBack === 4)
  t.equal(await queue.getDelayedCount(), 4, 'every job waits out the circuit, none was sent')
  const first = gate.enter('ep_open')
  t.ok('release' in first, 'one in flight')
  const second = gate.enter('ep_open')
  t.ok(second instanceof Promise, 'a second waits: no answer came back, so no share was earned')
  if ('release' in first) first.release(false)
  const admitted = await second
  if ('release' in admitted) admitted.release(false)
})
