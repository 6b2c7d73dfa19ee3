import t from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import anvil, { type AnvilPluginOptions } from '../../index.js'
import { TestRedis } from '../helpers/redis.js'
import { SECRET, buildApp, signed } from '../helpers/app.js'

/** An app whose log lines are kept, to check what a 503 logs. */
async function loggedApp (redis: string, options: Partial<AnvilPluginOptions>): Promise<{ app: Awaited<ReturnType<typeof buildApp>>, lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = Fastify({ logger: { level: 'warn', stream } })
  await app.register(anvil, { redis, secret: SECRET, ...options })
  await app.ready()
  return { app, lines }
}
import { inspectQueue } from '../helpers/queue.js'
import { eventually } from '../helpers/eventually.js'

t.test('Redis down: 503 with Retry-After at once (no wait for the enqueue timeout), no crash, serves again once Redis is back', async (t) => {
  const redis = await TestRedis.start()
  t.teardown(() => redis.stop())
  // An enqueue timeout no test run reaches: a 503 that waited for it would never come.
  const { app, lines } = await loggedApp(redis.url, { queueName: 'outage', enqueueTimeoutMs: 3_600_000 })
  t.teardown(() => app.close())
  t.equal((await app.inject(signed('{"id":"before"}'))).statusCode, 202)

  await redis.kill()
  for (const id of ['during-1', 'during-2']) {
    const res = await app.inject(signed(JSON.stringify({ id })))
    t.equal(res.statusCode, 503, res.body)
    t.equal(res.headers['retry-after'], '5')
    t.equal(res.json().code, 'ANVIL_ERR_REDIS_UNAVAILABLE')
  }
  const reasons = lines.filter((l) => l.code === 'ANVIL_ERR_REDIS_UNAVAILABLE').map((l) => l.reason)
  t.ok(reasons.length > 0, 'the 503s are logged with their reason')
  t.same(reasons.filter((reason) => /did not answer within/.test(String(reason))), [], 'refused because the connection is down, not after a wait')

  await redis.startProcess()
  // ioredis reconnects on its own; the same delivery the provider retries now gets in.
  await eventually('the retried delivery accepted', async () => (await app.inject(signed('{"id":"during-1"}'))).statusCode === 202)
  const queue = inspectQueue(redis.url, 'outage')
  t.teardown(() => queue.close())
  t.equal(await queue.count(), 1, 'the restarted (empty) Redis holds the one accepted retry')
})

t.test('Redis not there at start-up: registration goes on, 503 until it comes', async (t) => {
  const redis = await TestRedis.start()
  await redis.kill()
  t.teardown(() => redis.stop())
  const app = await buildApp(redis.url, { queueName: 'late', connectTimeoutMs: 200, enqueueTimeoutMs: 300 })
  t.teardown(() => app.close())
  const down = await app.inject(signed('{"id":"refused"}'))
  t.equal(down.statusCode, 503)
  await redis.startProcess()
  await eventually('the delivery accepted once Redis came', async () => (await app.inject(signed('{"id":"late"}'))).statusCode === 202)
  const queue = inspectQueue(redis.url, 'late')
  t.teardown(() => queue.close())
  const jobs = await queue.getJobs(['wait'])
  t.same(jobs.map((job) => Buffer.from(job.data.payload, 'base64').toString()), ['{"id":"late"}'],
    'the delivery answered 503 was not kept in memory and written once Redis came')
})

t.test('Redis out of memory: 503, and accepted again once memory is there', async (t) => {
  const redis = await TestRedis.start(['--maxmemory-policy', 'noeviction'])
  t.teardown(() => redis.stop())
  const { app, lines } = await loggedApp(redis.url, { queueName: 'oom' })
  t.teardown(() => app.close())
  t.equal((await app.inject(signed('{"id":"warm"}'))).statusCode, 202)
  await redis.command('config', 'set', 'maxmemory', '1')
  const full = await app.inject(signed('{"id":"full"}'))
  t.equal(full.statusCode, 503)
  t.equal(full.json().code, 'ANVIL_ERR_REDIS_UNAVAILABLE')
  t.same(full.json(), { error: 'Queue unavailable, retry later', code: 'ANVIL_ERR_REDIS_UNAVAILABLE' }, 'Redis internals stay out of the answer')
  t.match(lines.find((l) => l.code === 'ANVIL_ERR_REDIS_UNAVAILABLE'), { level: 40, reason: /OOM/ }, 'the reason is logged')
  await redis.command('config', 'set', 'maxmemory', '0')
  t.equal((await app.inject(signed('{"id":"full"}'))).statusCode, 202)
})

t.test('a slow Redis: 503 when the enqueue timeout passes', async (t) => {
  const redis = await TestRedis.start()
  t.teardown(() => redis.stop())
  const { app, lines } = await loggedApp(redis.url, { queueName: 'slow', enqueueTimeoutMs: 300 })
  t.teardown(() => app.close())
  t.equal((await app.inject(signed('{"id":"warm"}'))).statusCode, 202)
  // Paused until the 503 is in (a minute bounds it if the test dies first), then resumed at once.
  await redis.command('client', 'pause', '60000', 'WRITE')
  const res = await app.inject(signed('{"id":"paused"}'))
  t.equal(res.statusCode, 503)
  t.match(lines.find((l) => l.code === 'ANVIL_ERR_REDIS_UNAVAILABLE'), { reason: /did not answer within 300 ms/ })
  await redis.command('client', 'unpause')

  // The README's guarantee for a single event: the add the 503 gave up on is applied once Redis resumes, and
  // the sender's retry finds it (replayed), so the event is one job, neither lost nor doubled.
  const queue = inspectQueue(redis.url, 'slow')
  t.teardown(() => queue.close())
  const payloads = async (): Promise<string[]> => (await queue.getJobs(['wait'])).map((job) => Buffer.from(job.data.payload, 'base64').toString())
  await eventually('the event answered 503 to become a job once Redis resumes', async () => (await payloads()).includes('{"id":"paused"}'))
  const retry = await app.inject(signed('{"id":"paused"}'))
  t.equal(retry.statusCode, 202)
  t.equal(retry.json().replayed, true, "the sender's retry is that job, not a second one")
  t.equal((await payloads()).filter((p) => p === '{"id":"paused"}').length, 1)
})

t.test('Redis down: the 503 warnings are throttled like the connection errors, with a summary line that counts them', async (t) => {
  const redis = await TestRedis.start()
  t.teardown(() => redis.stop())
  const { app, lines } = await loggedApp(redis.url, { queueName: 'outage-lines', enqueueTimeoutMs: 300 })
  t.teardown(() => app.close())
  await redis.kill()
  const answered = 40
  for (let i = 0; i < answered; i++) t.equal((await app.inject(signed(JSON.stringify({ id: `down-${i}` })))).statusCode, 503)
  const unavailable = (): Array<Record<string, unknown>> => lines.filter((l) => l.msg === 'anvil: queue unavailable, answered 503')
  // One first line per distinct reason (a dropped connection reads differently from a closed one), not one per request.
  const reasons = new Set(unavailable().map((l) => l.reason))
  t.equal(unavailable().length, reasons.size, 'one line per reason for the burst')
  t.ok(reasons.size <= 3, `a handful of lines for ${answered} answers`)
  t.match(unavailable()[0], { level: 40, code: 'ANVIL_ERR_REDIS_UNAVAILABLE', requestId: /./ })
  // Once the window ends, summary lines say how many were left out: with the first lines, every 503 is counted.
  const counted = (): number => unavailable().reduce((sum, l) => sum + (typeof l.repeated === 'number' ? l.repeated : 1), 0)
  await eventually('the summaries to count every 503', () => counted() === answered)
  t.equal(counted(), answered, 'the first lines and the summaries count every 503')
  t.ok(unavailable().some((l) => typeof l.repeated === 'number' && l.repeated > 0), 'a summary line with its count')
})
