/**
 * The outbox's dispatch is fair between tenants (issue 33, item 4): the dispatcher's claim takes each tenant's
 * oldest messages in turn, so a noisy tenant's thousands of pending messages do not stand in front of a quiet
 * tenant's one. Asserted on what each claim takes, never on time; the messages are real publishes.
 */
import t from 'tap'
import { outboundFixture } from '../helpers/outbound.js'

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
