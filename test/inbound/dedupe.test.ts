import t from 'tap'
import { startTarget } from '../helpers/target.js'
import { buildApp, signed } from '../helpers/app.js'
import { inspectQueue } from '../helpers/queue.js'
import { signAnvil } from '../../src/providers/anvil.js'
import { createWorker } from '../../src/worker/worker.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())

t.test('50 identical deliveries at once over two ingress instances: one job, one replayed:false', async (t) => {
  const [a, b] = await Promise.all([buildApp(redis.url, { queueName: 'storm' }), buildApp(redis.url, { queueName: 'storm' })])
  t.teardown(() => Promise.all([a.close(), b.close()]))
  const request = signed(JSON.stringify({ id: 'evt_storm' }))
  const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).inject(request)))
  t.same(responses.map((r) => r.statusCode), Array(50).fill(202))
  const bodies = responses.map((r) => r.json() as { jobId: string, replayed: boolean })
  t.equal(bodies.filter((r) => !r.replayed).length, 1, 'exactly one says replayed: false')
  t.equal(new Set(bodies.map((r) => r.jobId)).size, 1, 'all name the same job')
  const queue = inspectQueue(redis, 'storm')
  t.teardown(() => queue.close())
  t.equal(await queue.count(), 1, 'one job in Redis')
})

t.test('once duplicates dominate, a duplicate is answered from its dedupe key without an add', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'reads' })
  t.teardown(() => app.close())
  const request = signed(JSON.stringify({ id: 'evt_reads' }))
  const first = (await app.inject(request)).json()
  // BullMQ's add script logs a 'deduplicated' event for each duplicate it sees; a read logs none.
  const deduplicatedEvents = async (): Promise<number> => {
    const entries = await redis.command('xrange', '{anvil}:reads:events', '-', '+') as Array<[string, string[]]>
    return entries.filter(([, fields]) => fields[1] === 'deduplicated').length
  }
  const answers = async (n: number): Promise<Array<{ jobId: string, replayed: boolean }>> => {
    const bodies = []
    for (let i = 0; i < n; i++) bodies.push((await app.inject(request)).json())
    return bodies
  }
  const warmUp = await answers(100)
  const afterWarmUp = await deduplicatedEvents()
  t.ok(afterWarmUp > 0 && afterWarmUp < 100, `the first duplicates went through the add (${afterWarmUp})`)
  const storm = await answers(100)
  t.same([...warmUp, ...storm], Array(200).fill({ jobId: first.jobId, replayed: true }), 'every duplicate names the one job')
  t.equal(await deduplicatedEvents(), afterWarmUp, 'the next 100 made no add at all')

  // A new event in the middle of the storm is not mistaken for one: the read misses and the add makes its job.
  const fresh = (await app.inject(signed(JSON.stringify({ id: 'evt_reads_new' })))).json()
  t.equal(fresh.replayed, false)
  t.not(fresh.jobId, first.jobId)
  const queue = inspectQueue(redis, 'reads')
  t.teardown(() => queue.close())
  t.equal(await queue.count(), 2, 'two events, two jobs')
})

t.test('the dedupe window outlives the job, and ends when configured', async (t) => {
  const app = await buildApp(redis.url, {
    queueName: 'window', dedupeWindowMs: 1500, retention: { completedCount: 0 }
  })
  const worker = createWorker(() => {}, { redis: redis.url, queueName: 'window', sweepIntervalMs: 0 })
  t.teardown(async () => { await worker.close(); await app.close() })
  const queue = inspectQueue(redis, 'window')
  t.teardown(() => queue.close())
  const request = signed('{"id":"evt_window"}')
  const first = (await app.inject(request)).json()
  t.equal(first.replayed, false)
  // The job completes and retention removes it at once; the dedupe key must not go with it.
  await worker.start()
  await eventually('the completed job to be removed', async () => await queue.getJobState(first.jobId) === 'unknown')
  const second = (await app.inject(request)).json()
  t.same(second, { jobId: first.jobId, replayed: true }, 'still a duplicate after the job is gone')
  t.equal(await queue.getJobCountByTypes('wait', 'active', 'completed', 'delayed'), 0, 'and no job was made')
  // The window is the dedupe key's TTL in Redis: once Redis has expired it, the window is over.
  await eventually('the dedupe key to expire', async () => (await redis.command('keys', `${queue.keys.de}:*`) as string[]).length === 0)
  const third = (await app.inject(request)).json()
  t.equal(third.replayed, false, 'after the window a new delivery makes a new job')
  t.not(third.jobId, first.jobId)
})

t.test('the default window is 72 hours', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'ttl' })
  t.teardown(() => app.close())
  await app.inject(signed('{"id":"evt_ttl"}'))
  const keys = await redis.command('keys', '{anvil}:ttl:de:*') as string[]
  t.equal(keys.length, 1)
  const ttl = Number(await redis.command('pttl', keys[0] as string))
  t.ok(ttl > 72 * 3600 * 1000 - 60_000 && ttl <= 72 * 3600 * 1000, `pttl ${ttl}`)
})

t.test('a provider that re-signs every retry is deduplicated by its event id', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'eventid', idempotency: { header: 'x-event-id' } })
  t.teardown(() => app.close())
  const first = await app.inject(signed('{"id":"evt_1","attempt":1}', { 'x-event-id': 'evt_1' }))
  const retry = await app.inject(signed('{"id":"evt_1","attempt":2}', { 'x-event-id': 'evt_1' }))
  t.same(retry.json(), { jobId: first.json().jobId, replayed: true })
  const other = await app.inject(signed('{"id":"evt_2","attempt":1}', { 'x-event-id': 'evt_2' }))
  t.equal(other.json().replayed, false)
})

t.test('body-field keys and function keys work through the plugin', async (t) => {
  const byField = await buildApp(redis.url, { queueName: 'field', idempotency: { bodyField: 'id' } })
  const byFunction = await buildApp(redis.url, { queueName: 'fn', idempotency: (i) => i.headers['x-delivery'] as string })
  t.teardown(() => Promise.all([byField.close(), byFunction.close()]))
  const a = await byField.inject(signed('{"id":"evt_f","v":1}'))
  const b = await byField.inject(signed('{"v":2,"id":"evt_f"}'))
  t.same(b.json(), { jobId: a.json().jobId, replayed: true })
  const c = await byFunction.inject(signed('one', { 'x-delivery': 'd1' }))
  const d = await byFunction.inject(signed('two', { 'x-delivery': 'd1' }))
  t.same(d.json(), { jobId: c.json().jobId, replayed: true })
})

t.test('the same body under a different valid signature is a different event by default', async (t) => {
  // Senders that sign once and resend the same bytes are deduplicated by signature + body;
  // a second secret signing the same bytes (rotation) is a different signature.
  const app = await buildApp(redis.url, { queueName: 'rotation', secrets: ['whsec_test_0123456789', 'whsec_next_0123456789'] })
  t.teardown(() => app.close())
  const body = '{"id":"evt_rot"}'
  const a = (await app.inject(signed(body))).json()
  const b = (await app.inject({ ...signed(body), headers: { 'content-type': 'application/json', 'x-signature': signAnvil('whsec_next_0123456789', body) } })).json()
  t.equal(a.replayed, false)
  t.equal(b.replayed, false)
})
