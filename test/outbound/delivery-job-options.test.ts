/**
 * `deliveryJobOptions` cannot void the outbox's dedupe (issue 33, item 11). A delivery job's id dedupes a second
 * fan-out of its message only while the job exists: `removeOnComplete: true` delivered 90 duplicates in 100 × 3.
 * Options that would remove finished jobs within the dispatch window, or replace the pair's id as the dedupe, are
 * refused at start with one line; options at the bound still dedupe a second fan-out of every message (real
 * PostgreSQL, Redis, a delivery worker and a receiver). The inbound side has no such option: its dedupe keys
 * outlive the jobs whatever the retention (test/retention.test.ts).
 */
import t from 'tap'
import { createOutbound, outboundInternals } from '../../src/outbox/outbound.js'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { dispatchWindowSeconds } from '../../src/outbox/delivery-job-options.js'
import { DEFAULT_DISPATCH_LEASE_MS, DEFAULT_DISPATCH_RETRY } from '../../src/outbox/outbound-options.js'
import { errors } from '../../src/shared/errors.js'
import { outboundFixture } from '../helpers/outbound.js'

import { startReceiver } from '../helpers/receiver.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const receiver = beforeAll(t, async () => await startReceiver((_req, res) => { res.statusCode = 204; res.end() }), async (receiver) => await receiver.close())
const WINDOW = dispatchWindowSeconds(DEFAULT_DISPATCH_LEASE_MS, DEFAULT_DISPATCH_RETRY)

t.test('the dispatch window: every lease a dispatch may hold, and every backoff between them', async (t) => {
  // 8 leases of 60 s, then 30 s, 1, 2, 4, 8, 15 and 15 min between them.
  t.equal(WINDOW, 8 * 60 + 30 + 60 + 120 + 240 + 480 + 900 + 900)
  t.equal(dispatchWindowSeconds(1000, { baseMs: 10, maxMs: 10, attempts: 2 }), 3)
})

t.test('options that would deliver a message twice are refused at start, each with one line naming it', async (t) => {
  const refused: Array<[object, RegExp]> = [
    [{ removeOnComplete: true }, /^Invalid Anvil options: outbound deliveryJobOptions\.removeOnComplete: true removes finished jobs by count or at once; a finished delivery job's id dedupes a second fan-out/],
    [{ removeOnComplete: 1000 }, /deliveryJobOptions\.removeOnComplete: 1000 removes finished jobs by count/],
    [{ removeOnComplete: { age: 60 } }, new RegExp(`deliveryJobOptions\\.removeOnComplete\\.age: 60 s is shorter than the dispatch window \\(${WINDOW} s\\)`)],
    [{ removeOnComplete: { count: 1_000_000 } }, /removeOnComplete\.age: undefined s is shorter/],
    [{ removeOnComplete: { age: 86_400, count: 50 } }, /removeOnComplete\.count: 50 is below 100000/],
    [{ removeOnFail: true }, /deliveryJobOptions\.removeOnFail: true/],
    [{ jobId: 'same' }, /deliveryJobOptions\.jobId: a delivery job's id \(its message and endpoint\) is its dedupe/],
    [{ deduplication: { id: 'x' } }, /deliveryJobOptions\.deduplication:/]
  ]
  for (const [deliveryJobOptions, message] of refused) {
    t.throws(() => createOutbound({ database: db.url, redis: redis.url, deliveryJobOptions }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message }, JSON.stringify(deliveryJobOptions))
  }
  // A longer lease widens the window the options must cover.
  t.throws(() => createOutbound({ database: db.url, redis: redis.url, dispatch: { leaseMs: 3_600_000 }, deliveryJobOptions: { removeOnComplete: { age: 30_000 } } }),
    new errors.INVALID_OPTIONS(`outbound deliveryJobOptions.removeOnComplete.age: 30000 s is shorter than the dispatch window (${dispatchWindowSeconds(3_600_000, DEFAULT_DISPATCH_RETRY)} s); ` +
      `a finished delivery job's id dedupes a second fan-out of its message, so a job removed sooner is delivered again: keep them at least the dispatch window, { age: ${dispatchWindowSeconds(3_600_000, DEFAULT_DISPATCH_RETRY)} } or more (seconds) and no count below 100000`))
})

t.test('options at the bound: 100 messages × 3 endpoints fanned out twice are delivered once each', async (t) => {
  const queueName = 'job-options'
  const outbound = fixture.open({ queueName, retrySchedule: [], deliveryJobOptions: { priority: 5, removeOnComplete: { age: WINDOW, count: 100_000 }, removeOnFail: { age: WINDOW } } })
  // No per-endpoint gate (a cap at the concurrency): on a loaded machine a 500 ms delivery marks an endpoint slow
  // and its jobs come back paced, one a second; pacing is test/outbound/endpoint-cap.test.ts's contract.
  const worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, queueName, allowNets: '127.0.0.0/8', maxInFlightPerEndpoint: 10 })
  t.teardown(async () => await worker.close())
  await worker.start()
  for (let i = 0; i < 3; i++) await outbound.endpoints.create({ url: `${receiver.url}/ep${i}`, tenant: 'dedupe' })
  for (let i = 0; i < 100; i++) await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'dedupe' })
  while (await outbound.dispatcher.dispatchOnce() > 0);
  await eventually('300 deliveries', () => receiver.received.length >= 300, 60_000)
  // A dispatcher that died after its fan-out, before marking the messages: their lease ends, and another fans them out again.
  await db.query("UPDATE anvil.outbox SET status = 'pending', dispatched_at = NULL, next_attempt_at = now() WHERE tenant = 'dedupe'")
  let again = 0
  for (let claimed; (claimed = await outbound.dispatcher.dispatchOnce()) > 0;) again += claimed
  t.equal(again, 100, 'every message was fanned out a second time')
  const seen = new Map<string, number>()
  for (const one of receiver.received) {
    const key = `${String(one.headers['webhook-id'])} ${one.url}`
    seen.set(key, (seen.get(key) ?? 0) + 1)
  }
  // A job the second fan-out added would wait, run, or end completed beside the first 300.
  await eventually('the queue to drain', async () => Object.values(await outboundInternals(outbound).queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed')).every((n) => n === 0))
  t.same(await outboundInternals(outbound).queue.getJobCounts('completed', 'failed'), { completed: 300, failed: 0 }, 'the second fan-out added no job')
  t.equal(receiver.received.length, 300)
  t.equal([...seen.values()].filter((n) => n > 1).length, 0, 'no message reached an endpoint twice')
  const [row] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM anvil.deliveries WHERE status = 'success'")
  t.equal(row?.n, 300)
})
