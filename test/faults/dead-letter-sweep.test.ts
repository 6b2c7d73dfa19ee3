/**
 * A worker process killed between a job's final failure and its dead-lettering. BullMQ has
 * moved the job to "failed"; Anvil's `failed` listener never ran. The next worker's start-up sweep
 * dead-letters it. The dying worker is test/fixtures/worker-process.mjs (a real process, SIGKILLed by itself
 * in a `failed` listener that runs before Anvil's); the next one is `anvil worker`.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { deadLetterId, type DeadLetterData } from '../../src/worker/dead-letter.js'
import { deadLetterQueueName } from '../../src/queue/open-queues.js'
import { Ingress } from '../../src/inbound/ingress.js'
import { resolveIngressOptions } from '../../src/inbound/ingress-options.js'
import { SECRET } from '../helpers/app.js'
import { inspect, parseJson, startCli, tempDir } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'
import { startScript } from '../fixtures/script.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

t.test('a worker SIGKILLed after the final failure, before the dead letter: the next start-up sweep writes it', async (t) => {
  const queueName = 'faults-sweep'
  const dir = tempDir(t)
  // Two attempts, 50 ms apart: the first failure is a retry (the fixture lets it pass), the second is final.
  const ingress = new Ingress(resolveIngressOptions({ redis: redis.url, secret: SECRET, queueName, retrySchedule: [50] }))
  const { jobId } = await ingress.enqueue({ id: 'evt_doomed', type: 'test.fail' }, { eventId: 'evt_doomed' })
  await ingress.close()

  const dyingLog = join(dir, 'dying.jsonl')
  const dying = startScript(t, 'worker-process.mjs', {
    REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HANDLER_LOG: dyingLog,
    FIXTURE_MODE: 'fail', FIXTURE_DIE_ON_FINAL_FAILURE: '1', SWEEP_INTERVAL_MS: '0'
  })
  t.equal(await dying.exited, 'SIGKILL', 'the worker died by SIGKILL')
  const lines = readFileSync(dyingLog, 'utf8').trim().split('\n').map((line) => parseJson(line))
  t.same(lines.map((line) => line?.attempt ?? 'died'), [1, 2, 'died'], 'two attempts ran, then it died on the final failure')
  t.equal(lines[2]?.dying, jobId)

  const main = inspect(t, redis.url, queueName)
  const dead = inspect(t, redis.url, deadLetterQueueName(queueName))
  const failed = await main.getJob(jobId)
  t.equal(await failed?.getState(), 'failed', 'BullMQ moved the job to failed before the process died')
  t.equal(failed?.attemptsMade, 2)
  t.equal(await dead.count(), 0, 'no dead letter yet: the process died before Anvil\'s listener')
  t.equal(await dead.getJob(deadLetterId(jobId)), undefined)

  const nextLog = join(dir, 'next.log')
  const next = startCli(t, ['worker', '--handler', 'test/fixtures/record-handler.mjs'], {
    env: { REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HOST: '127.0.0.1', PORT: '0', ANVIL_METRICS_PATH: 'off', HANDLER_LOG: nextLog }
  })
  // `start()` runs the first sweep before it resolves, and the CLI logs "started" after it.
  await next.log('anvil worker: started')
  const letter = await dead.getJob(deadLetterId(jobId))
  t.ok(letter !== undefined, `d_${jobId} is in ${deadLetterQueueName(queueName)} once the next worker has started`)
  const data = letter?.data as DeadLetterData | undefined
  t.equal(data?.originalJobId, jobId)
  t.equal(data?.job.eventId, 'evt_doomed')
  t.match(data?.failureContext, { attempts: 2, reason: 'exhausted', lastError: 'the handler always fails' })
  t.equal(await dead.count(), 1, 'exactly one dead letter')
  t.equal(await main.getJobState(jobId), 'failed', 'the failed job stays (its dedupe key with it); the sweep does not run it again')
  t.equal(readFileSync(nextLog, { flag: 'a+' }).length, 0, 'the next worker did not call the handler')
  t.equal(await next.stop('SIGTERM'), 0)
})
