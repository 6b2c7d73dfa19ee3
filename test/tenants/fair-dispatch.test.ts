/**
 * The outbox's dispatch is fair between tenants (issue 33, item 4): the dispatcher's claim takes each tenant's
 * oldest messages in turn, so a noisy tenant's thousands of pending messages do not stand in front of a quiet
 * tenant's one. Asserted on what each claim takes, never on time; the messages are real publishes.
 */
import t from 'tap'
import { outboundFixture } from '../helpers/outbound.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { eventually } from '../helpers/eventually.js'
import { createFanOutLane, LANE_CHUNK, LANE_IN_FLIGHT } from '../../src/outbox/fan-out-lane.js'
import type { OutboundJobData } from '../../src/delivery/delivery-job.js'

const fixture = outboundFixture()
const { db } = fixture
const BATCH = 25
const NOISY = 2000
/** The fan-out test's noisy endpoints, and messages a burst: 10,000 jobs, so a burst is still being fanned out while the test publishes the next (a quiet machine adds them in a few hundred ms). */
const ENDPOINTS = 400
const BURST = 25

t.test('a quiet tenant\'s message published behind a noisy tenant\'s 2,000 pending ones is in the next claim', async (t) => {
  const outbound = fixture.open({ queueName: 'fair-claim', dispatch: { batchSize: BATCH } })
  const pool = db.pool(1)
  // The noisy tenant's backlog, published in transactions of 100 (each a publish of its own, as a busy app's are).
  for (let start = 0; start < NOISY; start += 100) {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      for (let i = start; i < start + 100; i++) await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'noisy' }, { client })
      await client.query('COMMIT')
    } finally { client.release() }
  }
  const quiet = (await outbound.publish({ type: 'order.paid', data: { quiet: true }, tenant: 'quiet' })).messageId
  const operator = (await outbound.publish({ type: 'order.paid', data: { operator: true } })).messageId

  const first = await outbound.dispatcher.claim()
  t.equal(first.length, BATCH, 'a full batch')
  t.ok(first.some((m) => m.id === quiet), 'the quiet tenant\'s message is in the first claim, where first in, first out took it after 80 claims')
  t.ok(first.some((m) => m.id === operator), 'and the operator\'s (no tenant)')
  t.equal(first.filter((m) => m.tenant === 'noisy').length, BATCH - 2, 'the rest of the batch is the noisy tenant\'s')
  // Within a tenant, oldest first: the noisy tenant's claimed messages are of its first transaction (one created_at).
  t.same(first.filter((m) => m.tenant === 'noisy' && (JSON.parse(m.data) as { i: number }).i >= 100), [], 'the noisy tenant\'s oldest')
  const second = await outbound.dispatcher.claim()
  t.equal(second.length, BATCH, 'the next claim is the noisy tenant\'s next batch')
  t.ok(second.every((m) => m.tenant === 'noisy'))
})

t.test('more tenants than a batch holds: the claims turn through them, no tenant two messages ahead of another', async (t) => {
  const outbound = fixture.open({ queueName: 'fair-turns', dispatch: { batchSize: 10 } })
  await db.query("UPDATE anvil.outbox SET status = 'dispatched' WHERE status = 'pending'")
  // Each tenant publishes its three at once, one tenant after another: first in, first out gives t00 its three first.
  const tenants = Array.from({ length: 35 }, (_, i) => `t${String(i).padStart(2, '0')}`)
  for (const tenant of tenants) for (let n = 0; n < 3; n++) await outbound.publish({ type: 'order.paid', data: { n }, tenant })
  const claimed = new Map(tenants.map((tenant) => [tenant, 0]))
  let total = 0
  for (let claim = 0; claim < 11; claim++) {
    for (const message of await outbound.dispatcher.claim()) {
      claimed.set(String(message.tenant), (claimed.get(String(message.tenant)) ?? 0) + 1)
      total++
    }
    const counts = [...claimed.values()]
    t.ok(Math.max(...counts) - Math.min(...counts) <= 1, `after claim ${claim + 1}, no tenant two ahead of another (${Math.min(...counts)}–${Math.max(...counts)})`)
  }
  t.equal(total, 3 * tenants.length, 'every message claimed, once')
  t.same(await outbound.dispatcher.claim(), [], 'nothing left')
})

t.test('fan-out\'s lane: a quiet tenant\'s job waits for the chunks in flight and one of the noisy tenant\'s, not its 3,000 jobs', async (t) => {
  const outbound = fixture.open({ queueName: 'fair-lane' })
  const { queue } = outboundInternals(outbound)
  const lane = createFanOutLane()
  const job = (id: string): { name: string, data: OutboundJobData, opts: { jobId: string, priority: number } } => ({
    name: 'deliver', data: { messageId: id, endpointId: 'ep', eventType: 'order.paid', url: 'https://x.example/', body: '{}', scheme: 'standard-webhooks', retry: [] }, opts: { jobId: id, priority: 1 }
  })
  const add = async (chunk: Array<ReturnType<typeof job>>): Promise<string[]> => (await queue.addBulk(chunk)).map((j) => String(j.id))
  // The noisy tenant's 3,000 jobs enter the lane first, the quiet tenant's one right after.
  const noisy = lane.add('noisy', Array.from({ length: 3000 }, (_, i) => job(`noisy-${i}`)), add)
  const quiet = lane.add('quiet', [job('quiet')], add)
  t.same(await quiet, ['quiet'])
  t.equal((await noisy).length, 3000, 'the burst, every job, in order')
  // One priority for all: the prioritized set's order is the order Redis added them in.
  const order = await queue.getRanges(['prioritized'], 0, -1, true)
  const ahead = order.indexOf('quiet')
  t.ok(ahead >= 0 && ahead <= (LANE_IN_FLIGHT + 1) * LANE_CHUNK, `${ahead} noisy jobs were added before the quiet one: at most the chunks in flight and one more`)
  t.equal(order.length, 3001)
})

t.test('fan-out\'s lane: a chunk that fails stops its fan-out, and the lane goes on', async (t) => {
  const lane = createFanOutLane(10, 1)
  const added: number[] = []
  const failing = lane.add('noisy', Array.from({ length: 50 }, (_, i) => i), async (chunk) => {
    if (chunk[0] === 20) throw new Error('Redis said no')
    added.push(...chunk)
    return chunk
  })
  await t.rejects(failing, /Redis said no/)
  t.same(added, Array.from({ length: 20 }, (_, i) => i), 'the chunks before the failed one, none after')
  t.same(await lane.add('quiet', [1], async (chunk) => chunk), [1], 'the lane goes on')
})

t.test('a quiet tenant\'s message published while the dispatcher fans out two of a noisy tenant\'s bursts is fanned out before either ends', async (t) => {
  const outbound = fixture.open({ queueName: 'fair-loop', notifyIntervalMs: 0 })
  await db.query("UPDATE anvil.outbox SET status = 'dispatched' WHERE status = 'pending'")
  // No delivery worker: the jobs stay in Redis, and the burst is the fan-out's work alone.
  for (let i = 0; i < ENDPOINTS; i++) await outbound.endpoints.create({ url: `https://noisy-${i}.example/hook`, tenant: 'noisy' })
  await outbound.endpoints.create({ url: 'https://quiet.example/hook', tenant: 'quiet' })
  const pool = db.pool(1)
  /** One burst: BURST messages in one transaction (one NOTIFY, so one claim takes them all), each to every noisy endpoint. */
  const burst = async (n: number): Promise<string[]> => {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      const ids: string[] = []
      for (let i = 0; i < BURST; i++) ids.push((await outbound.publish({ type: 'order.paid', data: { n, i }, tenant: 'noisy' }, { client })).messageId)
      await client.query('COMMIT')
      return ids
    } finally { client.release() }
  }
  const claimed = async (ids: string[]): Promise<boolean> =>
    (await db.query('SELECT count(*)::int AS n FROM anvil.outbox WHERE id = ANY($1) AND (lease_owner IS NOT NULL OR status = \'dispatched\')', [ids]))[0]?.n === ids.length
  const pending = async (ids: string[]): Promise<number> =>
    (await db.query('SELECT count(*)::int AS n FROM anvil.outbox WHERE id = ANY($1) AND status = \'pending\'', [ids]))[0]?.n
  await outbound.dispatcher.start()
  const first = await burst(1)
  await eventually('the first burst claimed', async () => await claimed(first))
  const second = await burst(2)
  await eventually('the second burst claimed', async () => await claimed(second))
  const quiet = (await outbound.publish({ type: 'order.paid', data: { quiet: true }, tenant: 'quiet' })).messageId
  const stillPending = [await pending(first), await pending(second)]
  t.ok(stillPending.every((n) => n > 0), `both bursts were being fanned out when the quiet message was published (${stillPending.join(' and ')} of ${BURST} pending)`)
  await eventually('every message dispatched', async () => await pending([...first, ...second, quiet]) === 0, 120_000)
  const rows = await db.query<{ burst: string, last: Date, quiet: Date }>(`SELECT b.burst, max(o.dispatched_at) AS last, (SELECT dispatched_at FROM anvil.outbox WHERE id = $3) AS quiet
    FROM anvil.outbox o JOIN (SELECT unnest($1::text[]) AS id, 'first' AS burst UNION ALL SELECT unnest($2::text[]), 'second') b ON b.id = o.id GROUP BY b.burst`, [first, second, quiet])
  // First in, first out (or passes that fan out a whole claim before claiming again) dispatched it after one of them ended.
  for (const row of rows) t.ok(row.quiet < row.last, `the quiet message was dispatched before the ${row.burst} burst's last message`)
})
