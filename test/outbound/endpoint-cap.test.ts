/**
 * The delivery worker's default per-endpoint cap adapts: a lone busy endpoint gets every slot; two endpoints
 * active, or a slow delivery, bring the cap (half the slots) back, of which an endpoint holds what its quick
 * answers earned (one for an endpoint that never answered quickly). Real Redis, a real receiver on loopback.
 */
import t, { type Test } from 'tap'
import type { ServerResponse } from 'node:http'
import { Queue } from 'bullmq'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { deliveryJobOptions } from '../../src/delivery/delivery-schedule.js'
import type { OutboundJobData } from '../../src/delivery/delivery-job.js'
import { TestRedis } from '../helpers/redis.js'
import { startReceiver, type Receiver } from '../helpers/receiver.js'

import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const CONCURRENCY = 4
/** The default cap while it binds: half the slots, rounded up. */
const CAP = 2
const SECRET = 'whsec_' + Buffer.alloc(32, 3).toString('base64')

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
let queueCount = 0

/** A receiver that holds the requests `hold` picks and counts how many it holds at once, per path. */
interface Holding { receiver: Receiver, held: ServerResponse[], most: Map<string, number>, releaseAll: () => void }

async function holdingReceiver (t: Test, hold: (path: string) => boolean): Promise<Holding> {
  const held: ServerResponse[] = []
  const inFlight = new Map<string, number>()
  const most = new Map<string, number>()
  const receiver = await startReceiver((req, res) => {
    const now = (inFlight.get(req.url) ?? 0) + 1
    inFlight.set(req.url, now)
    most.set(req.url, Math.max(most.get(req.url) ?? 0, now))
    res.on('close', () => inFlight.set(req.url, (inFlight.get(req.url) ?? 1) - 1))
    res.statusCode = 204
    if (hold(req.url)) held.push(res)
    else res.end()
  })
  const releaseAll = (): void => { for (const res of held.splice(0)) res.end() }
  t.teardown(async () => { releaseAll(); await receiver.close() })
  return { receiver, held, most, releaseAll }
}

/** A worker with the default cap (none given) on a queue of its own; jobs are added in the order given. */
async function setup (t: Test): Promise<{ queue: Queue<OutboundJobData>, completed: Map<string, number> }> {
  const queueName = `cap${++queueCount}`
  const queue = new Queue<OutboundJobData>(queueName, { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: '{t}' })
  const worker = createDeliveryWorker({
    redis: redis.url, store: { loadSecrets: async () => [SECRET] }, queueName, prefix: '{t}', allowNets: '127.0.0.0/8',
    concurrency: CONCURRENCY, timeoutMs: 30_000, shutdownTimeoutMs: 1000, circuit: false
  })
  const completed = new Map<string, number>()
  worker.worker.on('completed', (job) => completed.set(job.data.endpointId, (completed.get(job.data.endpointId) ?? 0) + 1))
  await worker.start()
  t.teardown(async () => { await worker.close(); await queue.close() })
  return { queue, completed }
}

async function add (queue: Queue<OutboundJobData>, url: string, endpoints: string[]): Promise<void> {
  await queue.addBulk(endpoints.map((endpointId, i) => ({
    name: 'deliver',
    data: { messageId: `msg_${i}`, endpointId, eventType: 'invoice.paid', url: `${url}/${endpointId}`, body: '{"n":1}', scheme: 'standard-webhooks' },
    opts: { ...deliveryJobOptions([1000]), removeOnComplete: true }
  })))
}

t.test('one endpoint alone gets every slot', async (t) => {
  let holding = true
  const r = await holdingReceiver(t, () => holding)
  const { queue, completed } = await setup(t)
  await add(queue, r.receiver.url, Array.from({ length: 12 }, () => 'ep_solo'))
  await eventually('(r.most.get(\'/ep_solo\') ?? 0) >= CONCURRENCY', async () => (r.most.get('/ep_solo') ?? 0) >= CONCURRENCY)
  holding = false
  r.releaseAll()
  await eventually('completed.get(\'ep_solo\') === 12', async () => completed.get('ep_solo') === 12)
  t.ok((r.most.get('/ep_solo') ?? 0) >= CONCURRENCY, `${CONCURRENCY} deliveries at once, not the cap of ${CAP}`)
  t.equal(await queue.getDelayedCount(), 0, 'no job was put back')
})

t.test('two endpoints active: the hanging one holds one slot, the other keeps being delivered', async (t) => {
  const r = await holdingReceiver(t, (path) => path === '/ep_hang')
  const { queue, completed } = await setup(t)
  // Alternated, the healthy endpoint first: from the second job on, two endpoints are active.
  await add(queue, r.receiver.url, Array.from({ length: 40 }, (_, i) => i % 2 === 0 ? 'ep_ok' : 'ep_hang'))
  await eventually('completed.get(\'ep_ok\') === 20 && queue.getDelayedCount() > 0', async () => completed.get('ep_ok') === 20 && await queue.getDelayedCount() > 0)
  // Held requests never end, so every request the hanging endpoint got is still in flight.
  t.equal(r.held.length, 1, 'the hanging endpoint got one delivery (it never earned a second), the jobs over it were put back')
  t.equal(completed.get('ep_ok'), 20, 'every healthy delivery went through meanwhile')
})

t.test('one endpoint alone, once a delivery took longer than 500 ms, is capped again', async (t) => {
  const r = await holdingReceiver(t, () => true)
  const { queue, completed } = await setup(t)
  await add(queue, r.receiver.url, Array.from({ length: 12 }, () => 'ep_solo'))
  await eventually('r.held.length === CONCURRENCY', async () => r.held.length === CONCURRENCY)
  // Held past the gate's 500 ms: the endpoint may be starting to hang.
  await new Promise((resolve) => setTimeout(resolve, 700))
  for (const res of r.held.splice(0)) res.end()
  await eventually('completed.get(\'ep_solo\') === CONCURRENCY && queue.getDelayedCount() >…', async () => completed.get('ep_solo') === CONCURRENCY && await queue.getDelayedCount() > 0)
  t.equal(r.held.length, 1, 'then one at once (held, never ended: its last deliveries were slow), the jobs over it put back')
})
