/**
 * Order per key (docs/outgoing-webhooks.md, "Order"), on real PostgreSQL, Redis and receivers on loopback: the
 * messages of one key reach each endpoint one after another, in publish order, each once the one before it there
 * succeeded or was given up; other keys, other endpoints and unkeyed messages are not held by it.
 */
import t, { type Test } from 'tap'
import type { ServerResponse } from 'node:http'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import type { DeliveryWorkerOptions } from '../../src/delivery/delivery-options.js'
import { createOutbound, outboundInternals, type Outbound } from '../../src/outbox/outbound.js'
import type { OutboundOptions } from '../../src/outbox/outbound-options.js'
import { outboundFixture } from '../helpers/outbound.js'
import { startReceiver, type Received, type Receiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture

/**
 * A service and a delivery worker of its own queue, started; both closed at the end of the test (a dispatcher left
 * running would take the next test's messages to its own queue).
 */
async function deliveringService (t: Test, queueName: string, options: Partial<OutboundOptions> = {}, workerOptions: Partial<DeliveryWorkerOptions> = {}): Promise<Outbound> {
  const outbound = createOutbound({ database: db.url, redis: redis.url, queueName, dispatch: { pollIntervalMs: 100 }, ...options })
  t.teardown(async () => await outbound.close())
  const worker = createDeliveryWorker({
    redis: redis.url, store: outboundInternals(outbound).store, queueName, allowNets: '127.0.0.0/8', jitter: 0, circuit: false, concurrency: 10, ...workerOptions
  })
  t.teardown(async () => await worker.close())
  await Promise.all([outbound.dispatcher.start(), worker.start()])
  return outbound
}

async function receiver (t: Test, answer: (req: Received, res: ServerResponse) => void): Promise<Receiver> {
  const started = await startReceiver(answer)
  t.teardown(async () => await started.close())
  return started
}

/** What a POST carried: the message's key and its number in the test's publish order. */
const payload = (req: Received): { key: string, n: number } => (JSON.parse(req.body) as { data: { key: string, n: number } }).data

/** Each key's numbers in the order their POSTs arrived, retries included. */
function arrivals (received: Received[]): Map<string, number[]> {
  const byKey = new Map<string, number[]>()
  for (const req of received) {
    const { key, n } = payload(req)
    byKey.set(key, [...byKey.get(key) ?? [], n])
  }
  return byKey
}

const successes = async (endpointId: string): Promise<number> =>
  (await db.query<{ n: number }>("SELECT count(DISTINCT message_id)::int AS n FROM anvil.deliveries WHERE endpoint_id = $1 AND status = 'success'", [endpointId]))[0]?.n ?? 0

t.test('200 keyed messages over 5 keys to a receiver failing every third POST: each key arrives in publish order, one at a time', async (t) => {
  const KEYS = 5
  const MESSAGES = 200
  let posts = 0
  const inFlight = new Map<string, number>()
  let mostInFlight = 0
  const target = await receiver(t, (req, res) => {
    const { key } = payload(req)
    const now = (inFlight.get(key) ?? 0) + 1
    inFlight.set(key, now)
    mostInFlight = Math.max(mostInFlight, now)
    posts++
    const status = posts % 3 === 0 ? 500 : 204
    // A short, varied answer: deliveries of other keys overlap this one.
    setTimeout(() => {
      inFlight.set(key, (inFlight.get(key) ?? 1) - 1)
      res.statusCode = status
      res.end()
    }, Math.floor(Math.random() * 5))
  })
  // Enough retries that no message is given up: every third POST fails, whichever message it carries.
  const outbound = await deliveringService(t, 'order-a', { retrySchedule: [10, 10, 10, 10, 10, 10, 10, 10, 10, 10] })
  const endpoint = await outbound.endpoints.create({ url: `${target.url}/a`, tenant: 'order-a' })
  const published = new Map<string, number[]>()
  for (let n = 0; n < MESSAGES; n++) {
    const key = `k${n % KEYS}`
    await outbound.publish({ type: 'order.paid', data: { key, n }, tenant: 'order-a', orderingKey: key })
    published.set(key, [...published.get(key) ?? [], n])
  }
  await eventually('every message delivered', async () => await successes(endpoint.id) === MESSAGES, 120_000)
  const failed = target.received.length - MESSAGES
  t.comment(`${target.received.length} POSTs for ${MESSAGES} messages, ${failed} of them answered 500`)
  t.ok(failed > 0, 'the receiver failed some POSTs')
  for (const [key, order] of arrivals(target.received)) {
    const firsts = order.filter((n, i) => i === 0 || order[i - 1] !== n)
    t.same(firsts, published.get(key), `${key}: each message's POSTs, retries included, came after the one before it and before the next`)
  }
  t.equal(mostInFlight, 1, 'never two POSTs of one key at once')
})

t.test('a head given up lets its followers go: its attempts ran out, then the next of its key is sent', async (t) => {
  // The key's first message always fails; its schedule gives it three attempts.
  const target = await receiver(t, (req, res) => {
    res.statusCode = payload(req).n === 0 ? 500 : 204
    res.end()
  })
  const outbound = await deliveringService(t, 'order-b', { retrySchedule: [10, 10] })
  const endpoint = await outbound.endpoints.create({ url: `${target.url}/b`, tenant: 'order-b' })
  const ids: string[] = []
  for (let n = 0; n < 3; n++) ids.push((await outbound.publish({ type: 'order.paid', data: { key: 'g', n }, tenant: 'order-b', orderingKey: 'g' })).messageId)
  await eventually('the followers delivered', async () => await successes(endpoint.id) === 2)
  t.same(arrivals(target.received).get('g'), [0, 0, 0, 1, 2], 'the head\'s three attempts, then its followers in order')
  const undelivered = await outbound.deliveries.undelivered({ endpoint: endpoint.id, limit: 10 })
  t.same(undelivered.items.map((item) => item.messageId), [ids[0]], 'the given-up head is listed as undelivered, for a re-send')
  // The last one's release follows its logged success.
  t.ok(await eventually('nothing of the key left waiting', async () => (await db.query('SELECT 1 FROM anvil.ordered_deliveries')).length === 0), 'nothing of the key waits')
})

t.test('a failing head holds its own key at its endpoint only: other keys, unkeyed messages and the other endpoint flow', async (t) => {
  // /one fails every POST of the head of key "stuck"; the retry is a minute away, so the head holds its key there.
  const target = await receiver(t, (req, res) => {
    const { key, n } = payload(req)
    res.statusCode = req.url === '/one' && key === 'stuck' && n === 0 ? 500 : 204
    res.end()
  })
  const outbound = await deliveringService(t, 'order-c', { retrySchedule: [60_000] })
  const one = await outbound.endpoints.create({ url: `${target.url}/one`, tenant: 'order-c' })
  const two = await outbound.endpoints.create({ url: `${target.url}/two`, tenant: 'order-c' })
  const publish = async (key: string, n: number, keyed = true): Promise<void> => {
    await outbound.publish({ type: 'order.paid', data: { key, n }, tenant: 'order-c', ...(keyed ? { orderingKey: key } : {}) })
  }
  for (let n = 0; n < 3; n++) await publish('stuck', n)
  for (let n = 3; n < 6; n++) await publish('free', n)
  for (let n = 6; n < 8; n++) await publish('none', n, false)
  await eventually('every message at /two, and all but the held key at /one', async () =>
    await successes(two.id) === 8 && await successes(one.id) === 5)
  const atOne = target.received.filter((req) => req.url === '/one').map(payload)
  t.same(atOne.filter((p) => p.key === 'stuck').map((p) => p.n), [0], '/one got the failing head once, and none of its followers')
  t.same(atOne.filter((p) => p.key === 'free').map((p) => p.n), [3, 4, 5], 'another key flowed at /one, in its order')
  t.same(arrivals(target.received.filter((req) => req.url === '/two')).get('stuck'), [0, 1, 2], 'the same key flowed at /two')
  const rows = await db.query<{ state: string }>("SELECT state FROM anvil.ordered_deliveries WHERE endpoint_id = $1 AND ordering_key = 'stuck' ORDER BY seq", [one.id])
  t.same(rows.map((row) => row.state), ['queued', 'waiting', 'waiting'], 'the head\'s job waits for its retry; its followers wait for it')
})

t.test('unkeyed messages keep their concurrency; a key has one delivery in flight', async (t) => {
  // Answers are held until the unkeyed messages are all in flight at once.
  const held: Array<() => void> = []
  const inFlight = { keyed: 0, unkeyed: 0 }
  let mostKeyed = 0
  let release = false
  const target = await receiver(t, (req, res) => {
    const kind = payload(req).key === 'one' ? 'keyed' : 'unkeyed'
    inFlight[kind]++
    mostKeyed = Math.max(mostKeyed, inFlight.keyed)
    const answer = (): void => { inFlight[kind]--; res.statusCode = 204; res.end() }
    if (release) answer()
    else held.push(answer)
  })
  // No per-endpoint cap: the worker's ten slots are all the endpoint's.
  const outbound = await deliveringService(t, 'order-d', {}, { maxInFlightPerEndpoint: 10 })
  const endpoint = await outbound.endpoints.create({ url: `${target.url}/d`, tenant: 'order-d' })
  for (let n = 0; n < 4; n++) {
    await outbound.publish({ type: 'order.paid', data: { key: 'one', n }, tenant: 'order-d', orderingKey: 'one' })
    await outbound.publish({ type: 'order.paid', data: { key: 'none', n }, tenant: 'order-d' })
  }
  await eventually('the four unkeyed messages in flight at once, beside the key\'s first', () => inFlight.unkeyed === 4 && inFlight.keyed === 1)
  release = true
  for (const answer of held.splice(0)) answer()
  await eventually('every message delivered', async () => await successes(endpoint.id) === 8)
  t.equal(mostKeyed, 1, 'the key never had two in flight')
  t.same(arrivals(target.received).get('one'), [0, 1, 2, 3], 'and its messages came in order')
})
