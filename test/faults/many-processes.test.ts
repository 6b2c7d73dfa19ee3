/**
 * Two `anvil serve` and two `anvil worker` processes on one Redis. 1,000 events over real HTTP,
 * 30 % of them delivered twice at once, once to each ingress. Every unique event ends exactly once, completed
 * or dead-lettered (the handler module, test/fixtures/record-handler.mjs, throws UnrecoverableError for every
 * tenth), never both and never twice, and the sums match: unique keys = jobs = completions + dead letters.
 */
import t from 'tap'
import { join } from 'node:path'
import { QueueEvents } from 'bullmq'
import { DEFAULT_PREFIX } from '../../src/shared/constants.js'
import { type DeadLetterData } from '../../src/worker/dead-letter.js'
import { deadLetterQueueName } from '../../src/queue/open-queues.js'
import { signAnvil } from '../../src/providers/anvil.js'
import { SECRET } from '../helpers/app.js'
import { inspect, startCli, tempDir, type Cli } from '../helpers/cli.js'

import { TestRedis } from '../helpers/redis.js'
import { handled } from '../fixtures/script.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

// Hundreds of events, 300 of them raced across the two ingresses (was 2,000: the races, not the count, are the point).
const EVENTS = 1000
const CONCURRENCY = 32

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const queueName = 'faults-many'

interface Answer { status: number, jobId?: string, replayed?: boolean }
let unavailable = 0

async function deliver (url: string, n: number): Promise<Answer> {
  const body = JSON.stringify({ id: `evt_${n}`, n, type: 'test.load' })
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(url, {
      method: 'POST', body, headers: { 'content-type': 'application/json', 'x-signature': signAnvil(SECRET, Buffer.from(body)) }
    })
    const json = await response.json() as { jobId?: string, replayed?: boolean }
    // A 503 (Redis slower than the enqueue timeout on a busy machine) is retried, as a provider would.
    if (response.status !== 503 || attempt === 50) return { status: response.status, jobId: json.jobId, replayed: json.replayed }
    unavailable++
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

t.test('2 ingress + 2 worker processes, 1,000 events, 30 % redelivered to the other ingress: each ends exactly once', async (t) => {
  const dir = tempDir(t)
  const common = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HOST: '127.0.0.1', PORT: '0', ANVIL_METRICS_PATH: 'off' }
  const events = new QueueEvents(queueName, { connection: { url: redis.url }, prefix: DEFAULT_PREFIX })
  t.teardown(() => events.close())
  await events.waitUntilReady()
  const completed: string[] = []
  const failed: string[] = []
  events.on('completed', ({ jobId }) => completed.push(jobId))
  events.on('failed', ({ jobId }) => failed.push(jobId))

  const servers: Cli[] = [0, 1].map(() => startCli(t, ['serve'], { env: { ...common, WEBHOOK_SECRET: SECRET } }))
  const urls = await Promise.all(servers.map(async (server) => `http://127.0.0.1:${(await server.log('anvil serve: listening')).port as number}/webhooks`))
  const logs = [0, 1].map((i) => join(dir, `worker-${i}.log`))
  const workers: Cli[] = logs.map((log) => startCli(t, ['worker', '--handler', 'test/fixtures/record-handler.mjs'], {
    env: { ...common, HANDLER_LOG: log, WORKER_CONCURRENCY: '20' }
  }))
  await Promise.all(workers.map(async (worker) => await worker.log('anvil worker: started')))

  const started = Date.now()
  const answers: Answer[][] = Array.from({ length: EVENTS }, () => [])
  let next = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < EVENTS) {
      const n = next++
      const home = n % 2
      // 30 %: the provider delivers the event twice, and the two deliveries reach different ingresses at once.
      const targets = n % 10 < 3 ? [home, 1 - home] : [home]
      answers[n] = await Promise.all(targets.map(async (i) => await deliver(urls[i] as string, n)))
    }
  }))
  const sentMs = Date.now() - started

  const requests = answers.flat()
  t.equal(requests.length, 1300, '1,000 events, 300 of them twice')
  t.same(requests.filter((a) => a.status !== 202), [], 'every delivery got a 202')
  const jobOf = new Map<number, string>()
  let split = 0
  answers.forEach((pair, n) => {
    const ids = new Set(pair.map((a) => a.jobId))
    if (ids.size !== 1) split++
    jobOf.set(n, pair[0]?.jobId as string)
  })
  t.equal(split, 0, 'both deliveries of an event name the same job')
  const jobs = new Set(jobOf.values())
  t.equal(jobs.size, EVENTS, 'one job per unique event')
  // A 503 whose add Redis did make turns the retry into a replay: then no answer says "made".
  const made = requests.filter((a) => a.replayed === false).length
  t.ok(made <= EVENTS && made >= EVENTS - unavailable, `one delivery per event made the job (${made}), the others were replays (${unavailable} retried 503s)`)

  const dead = inspect(t, redis.url, deadLetterQueueName(queueName))
  const settled = (): number => completed.length + failed.length
  await eventually('every job to be completed or failed', () => settled() >= EVENTS, 60_000)
  await eventually('every failed job to be dead-lettered', async () => await dead.count() >= failed.length, 30_000)
  const settledMs = Date.now() - started

  const main = inspect(t, redis.url, queueName)
  const counts = await main.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed')
  t.same(counts, { waiting: 0, active: 0, delayed: 0, prioritized: 0, 'waiting-children': 0, failed: EVENTS / 10 }, 'nothing left in flight; only the dead-lettered jobs are failed')

  const completedSet = new Set(completed)
  const letters = await dead.getJobs(['wait'], 0, -1, true)
  const deadSet = new Set(letters.map((letter) => (letter.data as DeadLetterData).originalJobId))
  t.equal(completedSet.size, completed.length, 'no job completed twice')
  t.equal(deadSet.size, letters.length, 'no job dead-lettered twice')
  t.same([...completedSet].filter((id) => deadSet.has(id)), [], 'no job both completed and dead-lettered')
  t.same([...jobs].filter((id) => !completedSet.has(id) && !deadSet.has(id)), [], 'every job ended')
  const expectedDead = [...jobOf].filter(([n]) => n % 10 === 0).map(([, id]) => id).sort()
  t.same([...deadSet].sort(), expectedDead, 'exactly the events the handler refuses are dead-lettered')

  const calls = logs.flatMap(handled)
  const callsPerJob = new Map<string, number>()
  for (const call of calls) callsPerJob.set(call.jobId, (callsPerJob.get(call.jobId) ?? 0) + 1)
  t.equal(calls.length, EVENTS, 'the handler ran 1,000 times')
  t.same([...callsPerJob.values()].filter((c) => c !== 1), [], 'once per job')
  t.same([...callsPerJob.keys()].filter((id) => !jobs.has(id)), [], 'and only for jobs a 202 named')
  const perWorker = logs.map((log) => handled(log).length)
  t.ok(perWorker.every((c) => c > 0), `both workers took jobs (${perWorker.join(' + ')})`)

  const dedupeKeys = await redis.command('eval', "return #redis.call('keys', ARGV[1])", 0, `${DEFAULT_PREFIX}:${queueName}:de:*`)
  t.equal(dedupeKeys, EVENTS, 'unique keys: one dedupe key per event')
  t.equal(jobs.size, completedSet.size + deadSet.size, `jobs (${jobs.size}) = completions (${completedSet.size}) + dead letters (${deadSet.size})`)
  t.comment(`${requests.length} requests sent in ${sentMs} ms (${unavailable} 503s, retried); all ${EVENTS} jobs settled and dead-lettered ${settledMs} ms after the first request; handler calls per worker ${perWorker.join(' + ')}`)

  for (const child of [...workers, ...servers]) t.equal(await child.stop('SIGTERM'), 0)
})
