/**
 * SIGTERM under load, on real `anvil serve` and `anvil worker` processes: no accepted request is lost,
 * and no job is left half-done without being run again.
 */
import t from 'tap'
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { signAnvil } from '../../src/providers/anvil.js'
import { enqueue, inspect, startCli, tempDir } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const SECRET = 'whsec_shutdown_0123'
/** Concurrent senders, each posting unique events back to back until the server stops answering. */
const SENDERS = 16
/** SIGTERM goes out once this many requests were accepted: the others are in flight or about to be sent. */
const ACCEPTED_BEFORE_SIGTERM = 100

t.test('serve: SIGTERM while requests stream in; every 202 is a job in Redis, every other answer is retryable', async (t) => {
  const queueName = 'shutdown-serve'
  const cli = startCli(t, ['serve'], {
    env: { REDIS_URL: redis.url, WEBHOOK_SECRET: SECRET, HOST: '127.0.0.1', PORT: '0', ANVIL_QUEUE: queueName, LOG_LEVEL: 'info' }
  })
  const url = `http://127.0.0.1:${await cli.listeningPort('anvil serve: listening')}/webhooks`

  const accepted: string[] = []
  const refusedStatuses: number[] = []
  let connectionErrors = 0
  let signalled = false
  let next = 0
  const sender = async (): Promise<void> => {
    for (;;) {
      const body = JSON.stringify({ id: `evt_${next++}` })
      try {
        const response = await fetch(url, {
          method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': signAnvil(SECRET, body) }, body
        })
        if (response.status === 202) accepted.push(((await response.json()) as { jobId: string }).jobId)
        else { refusedStatuses.push(response.status); await response.arrayBuffer() }
      } catch {
        // Refused or reset: the sender never got a 202, so it redelivers; only a 202 is a promise.
        connectionErrors++
        if (signalled) return
      }
      if (!signalled && accepted.length >= ACCEPTED_BEFORE_SIGTERM) {
        signalled = true
        cli.child.kill('SIGTERM')
      }
    }
  }
  await Promise.all(Array.from({ length: SENDERS }, sender))
  t.equal(await cli.exited, 0, 'exit 0', { output: cli.output })
  t.ok(accepted.length >= ACCEPTED_BEFORE_SIGTERM, `${accepted.length} accepted`)
  t.ok(connectionErrors > 0, 'the server stopped accepting')
  t.same([...new Set(refusedStatuses)].filter((status) => status !== 503), [], 'any refusal while closing is a retryable 503')
  const queue = inspect(t, redis.url, queueName)
  const missing = []
  for (const jobId of accepted) if (await queue.getJobState(jobId) === 'unknown') missing.push(jobId)
  t.same(missing, [], 'every accepted request is a job in Redis')
  t.equal(await queue.count(), accepted.length, 'and nothing else')
})

t.test('worker: SIGTERM with jobs active and waiting; active ones finish, none runs half-done, a new worker does the rest', async (t) => {
  const queueName = 'shutdown-worker'
  const dir = tempDir(t)
  const out = join(dir, 'progress.log')
  writeFileSync(out, '')
  writeFileSync(join(dir, 'slow.mjs'), `
    import { appendFileSync } from 'node:fs'
    import { setTimeout as sleep } from 'node:timers/promises'
    export default async function (event) {
      appendFileSync(process.env.HANDLER_OUT, 'start ' + event.id + '\\n')
      await sleep(300)
      appendFileSync(process.env.HANDLER_OUT, 'done ' + event.id + '\\n')
    }`)
  const jobIds: string[] = []
  for (let i = 0; i < 30; i++) jobIds.push(await enqueue(redis.url, queueName, `evt_load_${i}`))
  const env = { HOST: '127.0.0.1', PORT: '0', REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HANDLER_OUT: out, WORKER_CONCURRENCY: '4' }
  const progress = (): string[] => readFileSync(out, 'utf8').split('\n').filter((line) => line !== '')

  const first = startCli(t, ['worker', '--handler', 'slow.mjs'], { cwd: dir, env: { ...env, ANVIL_SHUTDOWN_TIMEOUT_MS: '10000' } })
  await eventually('progress().filter((line) => line.startsWith(\'done\')).length >= 6', () => progress().filter((line) => line.startsWith('done')).length >= 6 ? true : undefined)
  t.equal(await first.stop('SIGTERM'), 0)
  appendFileSync(out, 'exit\n')
  const beforeExit = progress().slice(0, progress().indexOf('exit'))
  const started = beforeExit.filter((line) => line.startsWith('start')).map((line) => line.slice(6))
  const done = beforeExit.filter((line) => line.startsWith('done')).map((line) => line.slice(5))
  t.same([...started].sort(), [...done].sort(), 'every job the first worker started, it finished before exiting')
  t.ok(done.length < jobIds.length, `it stopped taking jobs (${done.length} of ${jobIds.length} done)`)

  const second = startCli(t, ['worker', '--handler', 'slow.mjs'], { cwd: dir, env: { ...env, WORKER_CONCURRENCY: '10' } })
  const queue = inspect(t, redis.url, queueName)
  await eventually('queue.getCompletedCount() === jobIds.length', async () => await queue.getCompletedCount() === jobIds.length ? true : undefined)
  t.equal(await second.stop('SIGTERM'), 0)
  const allDone = new Set(progress().filter((line) => line.startsWith('done')).map((line) => line.slice(5)))
  t.same([...allDone].sort(), [...jobIds].sort(), 'every job ran to its end')
})
