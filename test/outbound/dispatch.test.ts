import t from 'tap'
import { dispatchDelay } from '../../src/outbox/dispatcher.js'
import { DEFAULT_DISPATCH_RETRY } from '../../src/outbox/outbound-options.js'
import { outboundFixture } from '../helpers/outbound.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { resolveSchedule } from '../../src/delivery/delivery-schedule.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db } = fixture

async function jobIds (outbound: ReturnType<typeof fixture.open>): Promise<string[]> {
  const jobs = await outboundInternals(outbound).queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized'])
  return jobs.map((job) => String(job.id)).sort()
}

t.test('fan-out: one job per subscribed, enabled endpoint of the tenant, with the envelope and no secret', async (t) => {
  const outbound = fixture.open({ queueName: 'fanout' })
  const all = await outbound.endpoints.create({ url: 'https://a.example/hook', tenant: 'shop' })
  const paidOnly = await outbound.endpoints.create({ url: 'https://b.example/hook', tenant: 'shop', eventTypes: ['order.paid'], scheme: 'stripe' })
  await outbound.endpoints.create({ url: 'https://c.example/hook', tenant: 'shop', eventTypes: ['order.refunded'] })
  await outbound.endpoints.create({ url: 'https://d.example/hook', tenant: 'shop', enabled: false })
  await outbound.endpoints.create({ url: 'https://e.example/hook', tenant: 'other' })
  await outbound.endpoints.create({ url: 'https://f.example/hook' })
  const { messageId } = await outbound.publish({ type: 'order.paid', data: { amount: 5 }, tenant: 'shop' })
  t.equal(await outbound.dispatcher.dispatchOnce(), 1)
  t.same(await jobIds(outbound), [`${messageId}.${all.id}`, `${messageId}.${paidOnly.id}`].sort())
  const job = await outboundInternals(outbound).queue.getJob(`${messageId}.${paidOnly.id}`)
  const row = (await db.query<{ created_at: Date }>('SELECT created_at FROM anvil.outbox WHERE id = $1', [messageId]))[0]
  t.same(job?.data, {
    messageId,
    endpointId: paidOnly.id,
    eventType: 'order.paid',
    url: 'https://b.example/hook',
    body: JSON.stringify({ id: messageId, type: 'order.paid', timestamp: row?.created_at.toISOString(), data: { amount: 5 } }),
    scheme: 'stripe',
    // The publisher's retry schedule (the default here) rides with the job, so whichever worker takes it retries on it.
    retry: [...resolveSchedule()]
  })
  t.notMatch(JSON.stringify(job?.data), /whsec_/)
  t.notMatch(String(job?.id), /:/)
})

t.test('two dispatchers at once: every message claimed once, exactly one job per endpoint', async (t) => {
  const a = fixture.open({ queueName: 'racing', dispatch: { batchSize: 7, pollIntervalMs: 50 } })
  const b = fixture.open({ queueName: 'racing', dispatch: { batchSize: 7, pollIntervalMs: 50 } })
  const endpoints = await Promise.all([1, 2, 3].map(async (n) => await a.endpoints.create({ url: `https://r${n}.example/`, tenant: 'race' })))
  await Promise.all([a.dispatcher.start(), b.dispatcher.start()])
  const ids = await Promise.all(Array.from({ length: 60 }, async (_, i) => (await (i % 2 === 0 ? a : b).publish({ type: 'x.y', data: i, tenant: 'race' })).messageId))
  await eventually('(db.query("SELECT 1 FROM anvil.outbox WHERE tenant = \'race\' AND statu…', async () => (await db.query("SELECT 1 FROM anvil.outbox WHERE tenant = 'race' AND status <> 'dispatched'")).length === 0, 30_000)
  const attempts = await db.query<{ attempts: number, n: number }>("SELECT attempts, count(*)::int AS n FROM anvil.outbox WHERE tenant = 'race' GROUP BY attempts")
  t.same(attempts, [{ attempts: 1, n: 60 }], 'no message was claimed twice')
  t.same(await jobIds(a), ids.flatMap((id) => endpoints.map((endpoint) => `${id}.${endpoint.id}`)).sort())
  // Running dispatchers would take the next tests' messages.
  await Promise.all([a.dispatcher.close(), b.dispatcher.close()])
})

t.test('a crash mid-dispatch loses nothing: the lease ends, another dispatcher takes it, a re-dispatch adds nothing', async (t) => {
  // An hour's lease, ended below by moving it into the past: no wait on the clock, and no expiry before the check.
  const crashed = fixture.open({ queueName: 'crash', dispatch: { leaseMs: 3_600_000 } })
  const survivor = fixture.open({ queueName: 'crash' })
  const endpoint = await crashed.endpoints.create({ url: 'https://crash.example/', tenant: 'crash' })
  const { messageId } = await crashed.publish({ type: 'x.y', data: 1, tenant: 'crash' })
  t.same((await crashed.dispatcher.claim()).map((m) => m.id), [messageId], 'claimed, then the process "dies" before fan-out')
  t.equal(await survivor.dispatcher.dispatchOnce(), 0, 'leased: not taken while the lease holds')
  await db.query("UPDATE anvil.outbox SET lease_until = now() - interval '1 second' WHERE id = $1", [messageId])
  t.equal(await survivor.dispatcher.dispatchOnce(), 1, 'the lease over, the survivor takes it')
  t.same(await jobIds(survivor), [`${messageId}.${endpoint.id}`])
  t.match((await db.query('SELECT status, attempts, lease_owner FROM anvil.outbox WHERE id = $1', [messageId]))[0], { status: 'dispatched', attempts: 2, lease_owner: null })
  // The crash after the jobs were added but before the row was marked: it is dispatched again, and BullMQ keeps the first job.
  await db.query("UPDATE anvil.outbox SET status = 'pending' WHERE id = $1", [messageId])
  t.equal(await survivor.dispatcher.dispatchOnce(), 1)
  t.same(await jobIds(survivor), [`${messageId}.${endpoint.id}`], 'still one job')
  // The first dispatcher coming back late cannot overwrite the row it lost.
  await db.query("UPDATE anvil.outbox SET status = 'pending', lease_owner = 'someone-else', lease_until = now() + interval '1 hour' WHERE id = $1", [messageId])
  t.equal(await crashed.dispatcher.dispatchOnce(), 0)
})

t.test('the dispatch backoff: 30 s, 1 m, 2 m … capped at 15 m', async (t) => {
  t.same([1, 2, 3, 4, 5, 6, 7, 8].map((n) => dispatchDelay(n, DEFAULT_DISPATCH_RETRY)),
    [30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000, 900_000])
})

t.test('a failing dispatch is retried on the schedule and failed after the last attempt', async (t) => {
  // A job option BullMQ refuses makes every fan-out fail, with Redis up.
  const failing = fixture.open({ queueName: 'failing', deliveryJobOptions: { priority: 1e9 }, dispatch: { retryBaseMs: 60_000, retryMaxMs: 240_000 } })
  await failing.endpoints.create({ url: 'https://fail.example/', tenant: 'fail' })
  const { messageId } = await failing.publish({ type: 'x.y', data: 1, tenant: 'fail' })
  const expected = [60, 120, 240, 240, 240, 240, 240]
  for (let attempt = 1; attempt <= 8; attempt++) {
    t.equal(await failing.dispatcher.dispatchOnce(), 1, `attempt ${attempt} claimed`)
    const [row] = await db.query<{ status: string, attempts: number, last_error: string, wait: number }>(
      'SELECT status, attempts, last_error, extract(epoch FROM next_attempt_at - now())::float8 AS wait FROM anvil.outbox WHERE id = $1', [messageId])
    t.equal(row?.attempts, attempt)
    t.match(row?.last_error, /[Pp]riority/)
    if (attempt < 8) {
      t.equal(row?.status, 'pending')
      const gap = expected[attempt - 1] as number
      t.ok(row !== undefined && row.wait > gap - 30 && row.wait <= gap, `retry ${attempt} waits about ${gap} s (${row?.wait})`)
      t.equal(await failing.dispatcher.dispatchOnce(), 0, 'not due before its time')
      await db.query('UPDATE anvil.outbox SET next_attempt_at = now() WHERE id = $1', [messageId])
    } else {
      t.equal(row?.status, 'failed', 'failed after 8 attempts')
    }
  }
  t.equal(await failing.dispatcher.dispatchOnce(), 0, 'a failed message is not claimed again')
  t.match(await failing.outboxStats(), { failed: 1 })
})

t.test('outbox stats: pending count and the age of the oldest pending message', async (t) => {
  const stats = fixture.open({ queueName: 'stats' })
  await db.query("INSERT INTO anvil.outbox (id, type, public_type, data, created_at) VALUES ('old-one', 'a', 'a', '1', now() - interval '10 minutes')")
  const result = await stats.outboxStats()
  t.ok(result.pending >= 1)
  t.ok(result.oldestPendingSeconds >= 600, `${result.oldestPendingSeconds}`)
})
