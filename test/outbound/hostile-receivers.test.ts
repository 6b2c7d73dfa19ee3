/**
 * Hostile receivers beside a healthy one, on a real delivery worker, real Redis and real receivers on loopback:
 * an endpoint that answers 200 and then trickles its body, and one that never answers, may cost their own
 * deliveries, never the healthy endpoint's. Every wait ends on an event; the request timeout (60 s) is far past
 * the guard, so a delivery held until it would fail the test.
 */
import t, { type Test } from 'tap'
import type { ServerResponse } from 'node:http'
import { Queue } from 'bullmq'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { deliveryJobOptions } from '../../src/delivery/delivery-schedule.js'
import type { DeliveryAttempt, OutboundJobData } from '../../src/delivery/delivery-job.js'
import { TestRedis } from '../helpers/redis.js'
import { startReceiver, type Receiver } from '../helpers/receiver.js'

import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const SECRET = 'whsec_' + Buffer.alloc(32, 5).toString('base64')
const TIMEOUT_MS = 60_000
const GUARD_MS = 30_000

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
let queueCount = 0

interface Hostile { receiver: Receiver, open: Set<ServerResponse>, closed: number, written: number[] }

/** Answers 200 then writes one byte a second, forever; or (`hang`) never answers. Counts open and closed connections. */
async function hostileReceiver (t: Test, mode: 'trickle' | 'hang'): Promise<Hostile> {
  const state: Hostile = { receiver: undefined as unknown as Receiver, open: new Set(), closed: 0, written: [] }
  state.receiver = await startReceiver((_req, res) => {
    state.open.add(res)
    let bytes = 0
    const drip = mode === 'trickle' ? setInterval(() => { res.write('.'); bytes++ }, 1000) : undefined
    if (mode === 'trickle') { res.writeHead(200); res.write('.'); bytes++ }
    res.on('close', () => {
      clearInterval(drip)
      state.open.delete(res)
      state.closed++
      state.written.push(bytes)
    })
  })
  t.teardown(async () => await state.receiver.close())
  return state
}

async function setup (t: Test, concurrency: number): Promise<{ queue: Queue<OutboundJobData>, attempts: DeliveryAttempt[], completed: Map<string, number> }> {
  const queueName = `hostile${++queueCount}`
  const queue = new Queue<OutboundJobData>(queueName, { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: '{t}' })
  const attempts: DeliveryAttempt[] = []
  const worker = createDeliveryWorker({
    redis: redis.url, store: { loadSecrets: async () => [SECRET] }, queueName, prefix: '{t}', allowNets: '127.0.0.0/8',
    concurrency, timeoutMs: TIMEOUT_MS, shutdownTimeoutMs: 500, onAttempt: (attempt) => attempts.push(attempt)
  })
  const completed = new Map<string, number>()
  worker.worker.on('completed', (job) => completed.set(job.data.endpointId, (completed.get(job.data.endpointId) ?? 0) + 1))
  await worker.start()
  t.teardown(async () => { await worker.close(); await queue.close() })
  return { queue, attempts, completed }
}

async function add (queue: Queue<OutboundJobData>, jobs: Array<[endpointId: string, url: string]>): Promise<void> {
  await queue.addBulk(jobs.map(([endpointId, url], i) => ({
    name: 'deliver',
    data: { messageId: `msg_${i}`, endpointId, eventType: 'invoice.paid', url: `${url}/${endpointId}`, body: '{"n":1}', scheme: 'standard-webhooks' },
    opts: { ...deliveryJobOptions([60_000]), removeOnComplete: true }
  })))
}

t.test('a 2xx that trickles its body is delivered on its status line: the socket and the slot are freed, the healthy endpoint goes on', async (t) => {
  const trickle = await hostileReceiver(t, 'trickle')
  const healthy = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(async () => await healthy.close())
  // Two slots, both taken by the trickling endpoints first: the healthy deliveries wait for one to be freed.
  const { queue, attempts, completed } = await setup(t, 2)
  await add(queue, [['ep_trickle_a', trickle.receiver.url], ['ep_trickle_b', trickle.receiver.url], ...Array.from({ length: 10 }, (): [string, string] => ['ep_ok', healthy.url])])
  await eventually('completed.get(\'ep_ok\') === 10 && attempts.filter((a) => a.endpointId.…', async () => completed.get('ep_ok') === 10 && attempts.filter((a) => a.endpointId.startsWith('ep_trickle')).length === 2 && trickle.closed === 2, GUARD_MS)
  const trickled = attempts.filter((a) => a.endpointId.startsWith('ep_trickle'))
  t.same(trickled.map((a) => [a.success, a.httpStatus]), [[true, 200], [true, 200]], 'each trickling delivery is a success with its status')
  t.ok(trickled.every((a) => a.responseHead.length > 0 && a.responseHead.length < 4096), 'what arrived of the body is kept, far short of the cap')
  t.equal(trickle.open.size, 0, 'the sender closed both trickling connections')
  t.ok(trickle.written.every((bytes) => bytes < 4096), 'without reading to the cap')
  t.equal(completed.get('ep_trickle_a'), 1)
  t.equal(completed.get('ep_trickle_b'), 1)
})

t.test('endpoints that never answer hold one slot each; the healthy endpoint\'s deliveries all go through meanwhile', async (t) => {
  const hang = await hostileReceiver(t, 'hang')
  const healthy = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(async () => await healthy.close())
  // Four slots, a cap of two per endpoint: two hanging endpoints at their cap would hold every slot for the timeout.
  const { queue, completed } = await setup(t, 4)
  const hanging = Array.from({ length: 8 }, (_, i): [string, string] => [i % 2 === 0 ? 'ep_hang_a' : 'ep_hang_b', hang.receiver.url])
  await add(queue, [...hanging, ...Array.from({ length: 20 }, (): [string, string] => ['ep_ok', healthy.url])])
  await eventually('completed.get(\'ep_ok\') === 20', async () => completed.get('ep_ok') === 20, GUARD_MS)
  const byPath = new Map<string, number>()
  for (const one of hang.receiver.received) byPath.set(one.url, (byPath.get(one.url) ?? 0) + 1)
  t.same(Object.fromEntries(byPath), { '/ep_hang_a': 1, '/ep_hang_b': 1 }, 'each hanging endpoint got one delivery, the rest were put back')
  t.equal(hang.open.size, 2, 'both still held')
  // A put-back job is promoted when due and put back again: wait for the moment all six sit delayed.
  t.ok(await eventually('six delayed jobs', async () => await queue.getDelayedCount() >= 6, GUARD_MS), 'the hanging endpoints\' other jobs wait as delayed jobs, holding no slot')
})
