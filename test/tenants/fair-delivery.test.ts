/**
 * Delivery is fair between tenants (issue 33, item 4): a noisy tenant's burst queued first does not stand in front
 * of a quiet tenant's delivery. Two delivery workers share the queue; a real receiver on loopback records the order
 * of its POSTs. Order is asserted, never time: the quiet delivery is taken within the jobs the workers already
 * hold, where first-in-first-out puts it behind the whole burst. Runs on a Redis Cluster too (test/cluster/).
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createOutbound, outboundInternals } from '../../src/outbox/outbound.js'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'

import { TestDatabase } from '../helpers/pg.js'
import { startTarget } from '../helpers/target.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const NOISY_ENDPOINTS = 60
const NOISY_MESSAGES = 5
const CONCURRENCY = 2

t.test('a quiet tenant\'s delivery queued behind a noisy tenant\'s burst of 300 is taken next, by either of two workers', async (t) => {
  // Each POST is answered after 15 ms, so the burst stays queued while the quiet delivery is added.
  const arrivals: string[] = []
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => { arrivals.push(req.url ?? ''); setTimeout(() => res.end('ok'), 15) })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const outbound = createOutbound({ database: db.url, redis: redis.url, retrySchedule: [] })
  t.teardown(async () => await outbound.close())
  for (let i = 0; i < NOISY_ENDPOINTS; i++) await outbound.endpoints.create({ url: `${base}/noisy/${i}`, tenant: 'noisy' })
  await outbound.endpoints.create({ url: `${base}/quiet`, tenant: 'quiet' })
  const workers = [0, 1].map(() => createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, allowNets: '127.0.0.0/8', concurrency: CONCURRENCY }))
  t.teardown(async () => await Promise.all(workers.map(async (worker) => await worker.close())))
  await Promise.all(workers.map(async (worker) => await worker.start()))

  for (let i = 0; i < NOISY_MESSAGES; i++) await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'noisy' })
  while (await outbound.dispatcher.dispatchOnce() > 0);
  const burst = NOISY_ENDPOINTS * NOISY_MESSAGES
  await eventually('the burst to be under way', () => arrivals.length >= 20, 30_000)

  await outbound.publish({ type: 'order.paid', data: { quiet: true }, tenant: 'quiet' })
  while (await outbound.dispatcher.dispatchOnce() > 0);
  // The quiet job is in Redis now: count the noisy POSTs that arrive before it.
  const before = arrivals.length
  await eventually('the quiet delivery', () => arrivals.includes('/quiet'), 60_000)
  const ahead = arrivals.indexOf('/quiet') - before
  t.comment(`${ahead} noisy POSTs arrived between the quiet job's queueing and its POST (${burst - before} were still queued)`)
  t.ok(burst - before > 100, 'most of the burst was still queued')
  t.ok(ahead <= 2 * 2 * CONCURRENCY, `taken within the jobs the workers held (${ahead} ahead)`)
  await eventually('the whole burst', () => arrivals.length === burst + 1, 120_000)
})
