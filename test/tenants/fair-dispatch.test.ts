/**
 * The outbox's dispatch is fair between tenants (issue 33, item 4): the dispatcher's claim takes each tenant's
 * oldest messages in turn, so a noisy tenant's thousands of pending messages do not stand in front of a quiet
 * tenant's one. Asserted on what each claim takes, never on time; the messages are real publishes.
 */
import t from 'tap'
import { outboundFixture } from '../helpers/outbound.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { createFanOutLane, LANE_CHUNK, LANE_IN_FLIGHT } from '../../src/outbox/fan-out-lane.js'
import type { OutboundJobData } from '../../src/delivery/delivery-job.js'

const fixture = outboundFixture()
const { db } = fixture
const BATCH = 25
const NOISY = 2000

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
