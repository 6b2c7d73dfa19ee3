/** `anvil worker`: handler modules (ESM, CommonJS, missing), graceful and forced shutdown, stalled-job recovery. Helpers: test/helpers/cli.ts. */
import t from 'tap'
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { enqueue, inspect, parseJson, ROOT, runCli, startCli, tempDir } from '../helpers/cli.js'
import { freePort, TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
/** The worker's health and metrics server: a free port on loopback, never a fixed one. */
const WORKER_HTTP = { HOST: '127.0.0.1', PORT: '0' }

// One worker for the example handler's contracts: its job, its health and metrics, and the prune of its first
// sweep (dead letters made before it starts). Each `anvil worker` start costs about 1 s of CPU.
t.test('anvil worker --handler examples/handler.js --retention-dead-age-seconds 600', async (t) => {
  const queueName = 'cli-example'
  const dead = inspect(t, redis.url, `${queueName}.dead`)
  const HOUR_MS = 3600_000
  // BullMQ's own creation time is what pruning goes by; an hour-old one is kept by the default (14 days).
  await dead.add('dead', { v: 1, originalJobId: 'e_old' }, { jobId: 'd_old', timestamp: Date.now() - HOUR_MS })
  await dead.add('dead', { v: 1, originalJobId: 'e_young' }, { jobId: 'd_young' })
  const cli = startCli(t, ['worker', '--handler', 'examples/handler.js', '--retention-dead-age-seconds', '600'], {
    cwd: ROOT, env: { ...WORKER_HTTP, REDIS_URL: redis.url, ANVIL_QUEUE: queueName, ANVIL_RETENTION_FAILED_AGE_SECONDS: '60' }
  })
  const { port } = await cli.log('anvil worker: health and metrics listening')
  await cli.log('anvil worker: started') // after the first sweep, which prunes
  const base = `http://127.0.0.1:${String(port)}`

  await t.test('worker prunes dead letters older than ANVIL_RETENTION_DEAD_AGE_SECONDS, and keeps younger ones', async (t) => {
    t.equal(await dead.getJob('d_old'), undefined, 'the hour-old dead letter is pruned')
    t.ok(await dead.getJob('d_young'), 'the young one stays')
  })

  await t.test('worker runs the example handler (default export, path relative to cwd)', async (t) => {
    const jobId = await enqueue(redis.url, queueName, 'evt_example')
    const handled = parseJson(await cli.line((line) => parseJson(line)?.handled === jobId))
    t.match(handled, { eventId: 'evt_example', type: 'test.ping', attempt: 1 })
    const queue = inspect(t, redis.url, queueName)
    t.equal(await eventually('queue.getJobState(jobId) === \'completed\' ? \'completed\' : undefined', async () => await queue.getJobState(jobId) === 'completed' ? 'completed' : undefined), 'completed')
  })

  await t.test('worker serves health and metrics on PORT; ready counts Redis and the worker', async (t) => {
    const ready = await fetch(`${base}/health/ready`)
    t.same([ready.status, await ready.json()], [200, { status: 'ready', redis: 'up', worker: 'running' }])
    // The one job the test above enqueued, handled.
    const metrics = await eventually('/anvil_jobs_processed_total\\{[^}]*\\} 1/.test(text) ? text : undefined', async () => {
      const text = await (await fetch(`${base}/metrics`)).text()
      return /anvil_jobs_processed_total\{[^}]*\} 1/.test(text) ? text : undefined
    })
    t.match(metrics, /anvil_received_to_handled_seconds_count\{[^}]*\} 1/)
    t.match(metrics, new RegExp(`anvil_queue_jobs\\{queue="${queueName}",state="completed"\\} 1`))
  })

  t.equal(await cli.stop('SIGTERM'), 0, 'SIGTERM exits 0')
})

// One worker for a CommonJS handler module, its metrics on a port of their own, and a graceful SIGTERM mid-job.
t.test('anvil worker --handler ./hooks.cjs --queue cli-cjs with ANVIL_METRICS_PORT=0', async (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'handled.jsonl')
  const progress = join(dir, 'progress.txt')
  const release = join(dir, 'release')
  // A plain job returns at once; a slow one waits for the test's word, given once the worker is shutting down.
  writeFileSync(join(dir, 'hooks.cjs'), `
    const { appendFileSync, existsSync } = require('node:fs')
    const { setTimeout: sleep } = require('node:timers/promises')
    exports.handler = async (event) => {
      const body = event.json()
      if (body.slow === true) {
        appendFileSync(process.env.HANDLER_PROGRESS, 'started\\n')
        while (!existsSync(process.env.HANDLER_RELEASE)) await sleep(20)
        appendFileSync(process.env.HANDLER_PROGRESS, 'done\\n')
        return
      }
      appendFileSync(process.env.HANDLER_OUT, JSON.stringify({ id: event.id, body }) + '\\n')
    }`)
  const queueName = 'cli-cjs'
  const cli = startCli(t, ['worker', '--handler', './hooks.cjs', '--queue', queueName], {
    cwd: dir, env: { ...WORKER_HTTP, REDIS_URL: redis.url, HANDLER_OUT: out, HANDLER_PROGRESS: progress, HANDLER_RELEASE: release, ANVIL_METRICS_PORT: '0' }
  })
  await cli.log('anvil worker: started')

  await t.test('worker loads a CommonJS module with a named `handler` export and processes a job end to end', async (t) => {
    const jobId = await enqueue(redis.url, queueName, 'evt_cjs')
    const written = await eventually('existsSync(out) ? readFileSync(out, \'utf8\') : undefined', () => existsSync(out) ? readFileSync(out, 'utf8') : undefined)
    t.same(JSON.parse(written), { id: jobId, body: { id: 'evt_cjs', type: 'test.ping' } })
  })

  await t.test('worker: ANVIL_METRICS_PORT=0 serves metrics apart on a port the OS picks, and logs it', async (t) => {
    const metricsPort = await cli.listeningPort('anvil worker: metrics listening')
    const port = await cli.listeningPort('anvil worker: health and metrics listening')
    t.not(metricsPort, port)
    t.match(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), /# TYPE anvil_jobs_processed_total counter/)
    t.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'not on the health port')
  })

  await t.test('worker on SIGTERM lets an active job finish, then exits 0', async (t) => {
    const jobId = await enqueue(redis.url, queueName, 'evt_slow', { id: 'evt_slow', type: 'test.ping', slow: true })
    await eventually('existsSync(progress)', () => existsSync(progress) ? true : undefined)
    const exited = cli.stop('SIGTERM')
    // The job is still running when the shutdown starts, and ends only after it started.
    await cli.log('anvil: shutting down')
    writeFileSync(release, '')
    t.equal(await exited, 0)
    t.equal(readFileSync(progress, 'utf8'), 'started\ndone\n', 'the job ran to its end before the exit')
    t.equal(await inspect(t, redis.url, queueName).getJobState(jobId), 'completed')
  })
})

t.test('worker --handler with neither a default nor a `handler` function: exit 1, one clear line', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'nothing.mjs'), 'export const answer = 42\n')
  const result = await runCli(['worker', '--handler', 'nothing.mjs'], { cwd: dir, env: { REDIS_URL: redis.url } })
  t.equal(result.code, 1)
  t.equal(result.stderr, 'anvil: invalid configuration: --handler nothing.mjs exports no handler: ' +
    'export a default function or router, or one named "handler" or "router"\n')
})

// The forced stop, then the recovery of the job it left: the first worker's stop is the forced one.
t.test('a job that hangs at SIGTERM', async (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'progress.txt')
  const hang = join(dir, 'hang')
  // Hangs while the marker exists: on the first worker only. An ES module's named `handler` export.
  writeFileSync(join(dir, 'once.mjs'), `
    import { appendFileSync, existsSync } from 'node:fs'
    export async function handler (event) {
      appendFileSync(process.env.HANDLER_OUT, 'started ' + event.id + ' attempt ' + event.attempt + '\\n')
      if (existsSync(process.env.HANG_MARKER)) await new Promise(() => {})
      appendFileSync(process.env.HANDLER_OUT, 'done ' + event.id + '\\n')
    }`)
  writeFileSync(hang, '')
  const queueName = 'cli-stalled'
  const env = { ...WORKER_HTTP, REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HANDLER_OUT: out, HANG_MARKER: hang }
  const queue = inspect(t, redis.url, queueName)
  let jobId = ''

  await t.test('worker on SIGTERM forces after ANVIL_SHUTDOWN_TIMEOUT_MS when a job hangs, and exits 0', async (t) => {
    // The lock is the one this worker takes: it expires 1 s after the forced stop, not BullMQ's 30 s.
    const first = startCli(t, ['worker', '--handler', 'once.mjs', '--lock-duration-ms', '1000', '--stalled-interval-ms', '500'], {
      cwd: dir, env: { ...env, ANVIL_SHUTDOWN_TIMEOUT_MS: '200' }
    })
    await first.log('anvil worker: started')
    jobId = await enqueue(redis.url, queueName, 'evt_stalled')
    await eventually('existsSync(out)', () => existsSync(out) ? true : undefined)
    t.equal(await first.stop('SIGTERM'), 0)
    t.ok(first.lines.some((line) => /shutdown timeout, forcing/.test(String(parseJson(line)?.msg))), 'logged the forced close')
    t.equal(await queue.getJobState(jobId), 'active', 'the job is left to stall recovery, its lock no longer renewed')
  })

  await t.test('a job a forced shutdown left active is taken back as stalled by another worker and completed, not lost', async (t) => {
    unlinkSync(hang)
    const second = startCli(t, ['worker', '--handler', 'once.mjs'], {
      cwd: dir, env: { ...env, ANVIL_LOCK_DURATION_MS: '1000', ANVIL_STALLED_INTERVAL_MS: '500' }
    })
    await second.log('anvil worker: stalled job taken back', { jobId })
    t.match(await second.log('anvil worker: job completed', { jobId }), { attempt: 1 })
    t.equal(await queue.getJobState(jobId), 'completed')
    t.equal(readFileSync(out, 'utf8'), `started ${jobId} attempt 1\nstarted ${jobId} attempt 1\ndone ${jobId}\n`,
      'the handler saw it again from the start; a stall is not a failed attempt')
    // BullMQ's maxStalledCount (1): a second stall of this job would fail it for good and dead-letter it.
    t.equal((await queue.getJob(jobId))?.stalledCounter, 1)
    t.equal(await second.stop('SIGTERM'), 0)
  })
})

t.test('worker started while Redis is unreachable: retries with one clear line, not ready, starts once Redis is there', async (t) => {
  const late = await TestRedis.start()
  t.teardown(() => late.stop())
  await late.kill()
  const cli = startCli(t, ['worker', '--handler', 'examples/handler.js'], {
    cwd: ROOT, env: { ...WORKER_HTTP, REDIS_URL: late.url, ANVIL_QUEUE: 'cli-worker-late' }
  })
  const { port } = await cli.log('anvil worker: health and metrics listening')
  await cli.log('anvil worker: Redis is not reachable yet; retrying (not ready until it answers)')
  const ready = await fetch(`http://127.0.0.1:${String(port)}/health/ready`)
  t.equal(ready.status, 503)
  t.match(await ready.json(), { status: 'not ready', redis: 'down' })
  const errorsLogged = cli.lines.filter((line) => parseJson(line)?.msg === 'anvil worker: Redis error').length
  t.ok(errorsLogged <= 2, `reconnect errors are not logged per attempt (${errorsLogged} lines)`)
  await late.startProcess()
  await cli.log('anvil worker: started')
  t.equal(await eventually('status === 200 ? status : undefined', async () => {
    const status = (await fetch(`http://127.0.0.1:${String(port)}/health/ready`)).status
    return status === 200 ? status : undefined
  }), 200)
  t.equal(await cli.stop('SIGTERM'), 0)
})

t.test('worker stopped before Redis was ever reached exits 0 at once, without waiting out the grace period', async (t) => {
  const cli = startCli(t, ['worker', '--handler', 'examples/handler.js'], {
    cwd: ROOT, env: { ...WORKER_HTTP, REDIS_URL: `redis://127.0.0.1:${await freePort()}`, ANVIL_SHUTDOWN_TIMEOUT_MS: '60000' }
  })
  await cli.log('anvil worker: health and metrics listening')
  t.equal(await cli.stop('SIGTERM'), 0)
  t.notOk(cli.lines.some((line) => /shutdown timeout/.test(String(parseJson(line)?.msg))), 'nothing was forced')
})
