import t, { type Test } from 'tap'
import type { Socket } from 'node:net'
import { Redis } from 'ioredis'
import type { JobsOptions } from 'bullmq'
import { TestRedis } from '../helpers/redis.js'
import { inspectQueue } from '../helpers/queue.js'
import { MAX_BATCH, WebhookQueue, type EnqueueInput } from '../../src/queue/webhook-queue.js'
import { resolveQueueSettings } from '../../src/inbound/ingress-options.js'
import { addCorked } from '../../src/queue/add-corked.js'
import { jobOptions } from '../../src/queue/queue-settings.js'
import { JOB_NAME } from '../../src/shared/constants.js'
import type { WebhookJobData } from '../../src/queue/job-data.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

function event (key: string): EnqueueInput {
  return { source: 'default', key, payload: Buffer.from(`{"id":"${key}"}`), headers: { 'x-test': key }, receivedAt: Date.now() }
}

/** Counts the writes a real socket hands to the kernel (`_write` for one chunk, `_writev` for several). */
function countWrites (socket: Socket): { readonly count: number, restore: () => void } {
  const target = socket as Socket & { _write: (...args: unknown[]) => void, _writev: (...args: unknown[]) => void }
  const { _write: write, _writev: writev } = target
  let count = 0
  target._write = function (...args) { count++; write.apply(this, args) }
  target._writev = function (...args) { count++; writev.apply(this, args) }
  return { get count () { return count }, restore: () => { target._write = write; target._writev = writev } }
}

/** A queue on a client of the test's own (so its socket can be watched), past its first add (which loads the script). */
async function warmQueue (t: Test, queueName: string): Promise<{ client: Redis, queue: WebhookQueue }> {
  const client = new Redis(redis.url, { maxRetriesPerRequest: null })
  const queue = new WebhookQueue({ redis: client, settings: resolveQueueSettings({ queueName }) })
  t.teardown(async () => {
    await queue.close()
    client.disconnect()
  })
  await queue.enqueue(event('warm-up'))
  return { client, queue }
}

t.test('adds made in the same turn leave in one socket write per batch, and each gets its own answer', async (t) => {
  const { client, queue } = await warmQueue(t, 'corked')

  const writes = countWrites(client.stream as Socket)
  // Ten events, two of them sent twice: a batch of MAX_BATCH (8), then one of the two repeats.
  t.equal(MAX_BATCH, 8)
  const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k0', 'k1']
  const results = await Promise.all(keys.map(async (key) => await queue.enqueue(event(key))))
  writes.restore()

  t.equal(writes.count, 2, 'one write for each batch: eight adds, then two')
  t.same(results.map((r) => r.replayed), [false, false, false, false, false, false, false, false, true, true],
    'an event repeated in the same turn is a duplicate of its first copy')
  t.equal(results[8]?.jobId, results[0]?.jobId)
  t.equal(results[9]?.jobId, results[1]?.jobId)
  t.equal(new Set(results.map((r) => r.jobId)).size, 8)

  const inspect = inspectQueue(redis.url, 'corked')
  t.teardown(() => inspect.close())
  for (const [i, key] of keys.slice(0, 8).entries()) {
    const job = await inspect.getJob(results[i]?.jobId as string)
    t.equal(job?.data.key, key, `job of ${key} holds its own event`)
    t.same(job?.data.headers, { 'x-test': key })
  }
})

t.test('a failing batch rejects every add in it, and the next batch goes through', async (t) => {
  const { queue } = await warmQueue(t, 'corked-oom')
  // Redis refuses writes over maxmemory (noeviction): each add script fails, as on a full production Redis.
  await redis.command('config', 'set', 'maxmemory', '1')
  t.teardown(async () => await redis.command('config', 'set', 'maxmemory', '0'))
  const outcomes = await Promise.allSettled(['a', 'b', 'c'].map(async (key) => await queue.enqueue(event(key))))
  t.same(outcomes.map((o) => o.status), ['rejected', 'rejected', 'rejected'])
  t.match((outcomes[0] as PromiseRejectedResult).reason, { code: 'ANVIL_ERR_REDIS_UNAVAILABLE' })

  await redis.command('config', 'set', 'maxmemory', '0')
  const after = await Promise.all(['a', 'b', 'c'].map(async (key) => await queue.enqueue(event(key))))
  t.same(after.map((r) => r.replayed), [false, false, false], 'nothing of the refused batch was kept')
})

t.test('a job added corked is stored as Queue.add stores it: the same fields, data and options', async (t) => {
  const client = new Redis(redis.url, { maxRetriesPerRequest: null })
  const queue = inspectQueue(redis.url, 'corked-same')
  t.teardown(async () => {
    await queue.close()
    client.disconnect()
  })
  const settings = resolveQueueSettings({ queueName: 'corked-same' })
  const data = (key: string): WebhookJobData => ({
    v: 1, source: 'default', key, payload: 'e30=', contentType: 'application/json', headers: { 'x-test': key }, receivedAt: 1, retry: settings.retrySchedule
  })
  const options = (key: string, jobId: string): { jobId: string } & ReturnType<typeof jobOptions> =>
    ({ ...jobOptions(settings), jobId, deduplication: { id: key, ttl: settings.dedupeWindowMs } })
  await queue.add(JOB_NAME, data('same'), options('k-added', 'e_added'))
  // Through BullMQ's connection, as WebhookQueue does; the cork is on the socket it writes to.
  const bullClient = await queue.backend.client
  t.same(await addCorked(queue, bullClient as unknown as Redis, [{ data: data('same'), opts: options('k-corked', 'e_corked') }]), ['e_corked'])

  const a = await client.hgetall('{anvil}:corked-same:e_added')
  const c = await client.hgetall('{anvil}:corked-same:e_corked')
  t.same(Object.keys(c).sort(), Object.keys(a).sort(), 'the same hash fields')
  t.equal(c.data, a.data, 'the same data')
  t.same(JSON.parse(c.opts ?? ''), { ...JSON.parse(a.opts ?? ''), jobId: 'e_corked', de: { id: 'k-corked', ttl: settings.dedupeWindowMs } }, 'the same options but the ids')
  t.equal(c.deid, 'k-corked')
  t.equal(await client.get('{anvil}:corked-same:de:k-corked'), 'e_corked', 'the dedupe key names the job')
  t.equal(c.name, a.name)
  t.equal(c.delay, a.delay)
  t.equal(c.priority, a.priority)
  t.ok(Math.abs(Number(c.timestamp) - Number(a.timestamp)) < 60_000, 'a timestamp of when it was added')
  const job = await queue.getJob('e_corked')
  t.same(job?.data, data('same'))
  t.equal(job?.opts.attempts, jobOptions(settings).attempts)
})

t.test('a corked add runs the check Queue.add runs: an option BullMQ refuses is refused, and nothing of the batch is sent', async (t) => {
  const queue = inspectQueue(redis.url, 'corked-invalid')
  t.teardown(() => queue.close())
  const bullClient = await queue.backend.client as unknown as Redis
  const data: WebhookJobData = { v: 1, source: 'default', key: 'k', payload: 'e30=', headers: {}, receivedAt: 1, retry: [] }
  const fine = { data, opts: { attempts: 1, jobId: 'e_fine' } }
  const refused: Array<[JobsOptions & { jobId: string }, RegExp]> = [
    [{ jobId: '123' }, /Custom Id cannot be integers/],
    [{ jobId: 'e_dedupe', deduplication: { id: '' } }, /Deduplication id must be provided/],
    [{ jobId: 'e_jitter', backoff: { type: 'fixed', delay: 1, jitter: 2 } }, /Jitter should be between 0 and 1/],
    [{ jobId: 'e_priority', priority: 1.5 }, /Priority should not be float/]
  ]
  for (const [opts, message] of refused) {
    await t.rejects(queue.add(JOB_NAME, data, opts), { message }, `Queue.add refuses ${JSON.stringify(opts)}`)
    await t.rejects(addCorked(queue, bullClient, [fine, { data, opts }]), { message }, 'and so does a corked add')
  }
  await t.rejects(addCorked(queue, bullClient, [{ data, opts: { jobId: 'e_child', parent: { id: 'p', queue: '{anvil}:other' } } }]),
    { message: /cannot make a child job/ }, 'a parent, which a corked add cannot carry')
  t.equal(await queue.count(), 0, 'not even the valid job of a refused batch was sent')
  t.same(await addCorked(queue, bullClient, [fine]), ['e_fine'], 'a valid batch still goes through')
})
