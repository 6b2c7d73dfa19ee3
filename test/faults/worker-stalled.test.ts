/**
 * A worker process SIGKILLed in the middle of its handlers. The jobs' locks expire, stalled-job
 * detection on another worker process takes them back, and they run again there: nothing is lost, and the
 * handler sees each of them twice (delivery is at-least-once). Both workers are
 * test/fixtures/worker-process.mjs (a SIGKILL, not the CLI's forced shutdown, which test/cli/worker.test.ts
 * follows through `anvil worker --lock-duration-ms`).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { QueueEvents } from 'bullmq'
import { DEFAULT_PREFIX } from '../../src/shared/constants.js'
import { Ingress } from '../../src/inbound/ingress.js'
import { resolveIngressOptions } from '../../src/inbound/ingress-options.js'
import { SECRET } from '../helpers/app.js'
import { inspect, parseJson, tempDir } from '../helpers/cli.js'

import { TestRedis } from '../helpers/redis.js'
import { startScript } from '../fixtures/script.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

function handled (file: string): Array<{ jobId: string, pid: number }> {
  let text = ''
  try { text = readFileSync(file, 'utf8') } catch {}
  return text.split('\n').filter((line) => line !== '').map((line) => parseJson(line) as { jobId: string, pid: number })
}

t.test('a worker SIGKILLed mid-handler: stalled-job detection hands its jobs to another worker, which completes them', async (t) => {
  const queueName = 'faults-stalled'
  const dir = tempDir(t)
  const events = new QueueEvents(queueName, { connection: { url: redis.url }, prefix: DEFAULT_PREFIX })
  t.teardown(() => events.close())
  await events.waitUntilReady()
  const stalled = new Set<string>()
  events.on('stalled', ({ jobId }) => stalled.add(jobId))

  const ingress = new Ingress(resolveIngressOptions({ redis: redis.url, secret: SECRET, queueName }))
  const jobIds: string[] = []
  for (let i = 0; i < 3; i++) jobIds.push((await ingress.enqueue({ id: `evt_${i}` }, { eventId: `evt_${i}` })).jobId)
  await ingress.close()

  // Short locks so the test need not wait BullMQ's 30 s; the dying worker sets them on its own jobs.
  const lock = { LOCK_DURATION_MS: '1000', STALLED_INTERVAL_MS: '500', SWEEP_INTERVAL_MS: '0', ANVIL_QUEUE: queueName, REDIS_URL: redis.url }
  const firstLog = join(dir, 'first.jsonl')
  const first = startScript(t, 'worker-process.mjs', { ...lock, HANDLER_LOG: firstLog, FIXTURE_MODE: 'hang', WORKER_CONCURRENCY: '5' })
  await first.log('fixture worker: started')
  await eventually('the first worker to be inside all three handlers', () => handled(firstLog).length === 3, 30_000)
  t.equal(await first.kill('SIGKILL'), 'SIGKILL')
  const killedAt = Date.now()

  const main = inspect(t, redis.url, queueName)
  for (const jobId of jobIds) t.equal(await main.getJobState(jobId), 'active', `${jobId} is left active by the dead worker`)

  const secondLog = join(dir, 'second.jsonl')
  const second = startScript(t, 'worker-process.mjs', { ...lock, HANDLER_LOG: secondLog, FIXTURE_MODE: 'ok' })
  await second.log('fixture worker: started')
  await eventually('every job to complete on the second worker', async () => {
    const states = await Promise.all(jobIds.map(async (id) => await main.getJobState(id)))
    return states.every((state) => state === 'completed')
  }, 30_000)
  t.comment(`all ${jobIds.length} jobs completed on the second worker ${Date.now() - killedAt} ms after the kill (lock 1000 ms, stalled check every 500 ms)`)

  await eventually('the stalled events', () => jobIds.every((id) => stalled.has(id)), 10_000)
  t.same([...stalled].sort(), [...jobIds].sort(), 'each job was taken back by stalled-job detection')
  const calls = [...handled(firstLog), ...handled(secondLog)]
  for (const jobId of jobIds) {
    t.same(calls.filter((call) => call.jobId === jobId).map((call) => call.pid), [first.pid, second.pid],
      `${jobId}: the handler saw it twice, on the killed worker and then on the other one`)
    t.equal((await main.getJob(jobId))?.data.eventId, `evt_${jobIds.indexOf(jobId)}`, `${jobId} kept its data`)
  }
  t.equal(await main.getFailedCount(), 0, 'nothing failed')
  t.equal(await second.kill('SIGTERM'), 0)
})
