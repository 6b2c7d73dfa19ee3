/**
 * The worker plugin runs a worker with the app: started on onReady, closed (gracefully) on onClose.
 */
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Job, Queue } from 'bullmq'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { startTarget } from '../helpers/target.js'

import { signed, SECRET } from '../helpers/app.js'
import anvil, { anvilWorker, type AnvilWorkerPluginOptions } from '../../index.js'
import type { WebhookEvent } from '../../src/worker/webhook-event.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())

async function appWith (queueName: string, worker: Omit<AnvilWorkerPluginOptions, 'redis'>, logs?: string[]): Promise<FastifyInstance> {
  const stream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      logs?.push(chunk.toString('utf8'))
      done()
    }
  })
  const app = Fastify({ logger: logs === undefined ? false : { level: 'warn', stream } })
  await app.register(anvil, { redis: redis.url, secret: SECRET, queueName })
  await app.register(anvilWorker, { redis: redis.url, queueName, sweepIntervalMs: 0, ...worker })
  return app
}

t.test('the worker starts when the app is ready, processes webhooks, and stops when the app closes', async (t) => {
  const events: WebhookEvent[] = []
  const app = await appWith('plugin', { handler: (event) => { events.push(event) } })
  t.teardown(() => app.close())
  t.equal(app.anvilWorker.running, false, 'not started by registration')
  await app.ready()
  t.equal(app.anvilWorker.running, true, 'started on ready')

  const res = await app.inject(signed(JSON.stringify({ id: 'evt_plugin' })))
  t.equal(res.statusCode, 202, res.body)
  await eventually('the event', () => events.length === 1)
  t.equal(events[0]?.id, res.json<{ jobId: string }>().jobId)
  t.same(events[0]?.json(), { id: 'evt_plugin' })

  await app.close()
  t.equal(app.anvilWorker.running, false, 'stopped on close')
  t.equal(app.anvilWorker.worker.isRunning(), false)
})

t.test('closing the app waits for the active job, which completes', async (t) => {
  const queueName = 'plugin-graceful'
  let release = (): void => {}
  const started = new Promise<void>((resolve) => { release = resolve })
  let finished = false
  const app = await appWith(queueName, {
    shutdownTimeoutMs: 5000,
    handler: async () => {
      release()
      await sleep(300)
      finished = true
    }
  })
  await app.ready()
  const { jobId } = await app.anvil.enqueue({ n: 1 })
  await started
  await app.close()
  t.equal(finished, true, 'the handler finished before the app closed')
  const queue = new Queue(queueName, { connection: redis.connection(), prefix: '{anvil}' })
  t.teardown(() => queue.close())
  t.equal(await (await Job.fromId(queue, jobId))?.getState(), 'completed')
})

t.test('the worker logs through the app logger', async (t) => {
  const logs: string[] = []
  const app = await appWith('plugin-logs', { handler: () => { throw new Error('handler broke') } }, logs)
  t.teardown(() => app.close())
  await app.ready()
  await app.anvil.enqueue({ n: 1 })
  await eventually('a log line', () => logs.some((line) => line.includes('anvil worker: attempt failed')))
  const line = JSON.parse(logs.find((l) => l.includes('anvil worker: attempt failed')) ?? '{}') as Record<string, unknown>
  t.match(line, { level: 40, err: 'handler broke', attempt: 1 })
})

t.test('an app closed before it was ready closes the worker cleanly', async (t) => {
  const app = await appWith('plugin-never-ready', { handler: () => {} })
  await app.close()
  t.equal(app.anvilWorker.running, false)
})

t.test('with Redis away, the worker plugin does not hold the host app down', async (t) => {
  const app = Fastify()
  app.get('/own', async () => ({ ok: true }))
  // Nothing listens on port 1: the worker cannot connect.
  await app.register(anvilWorker, { redis: 'redis://127.0.0.1:1', handler: () => {}, sweepIntervalMs: 0, shutdownTimeoutMs: 100 })
  t.teardown(() => app.close())
  await app.ready()
  t.same((await app.inject({ method: 'GET', url: '/own' })).json(), { ok: true }, 'the host serves its own routes')
})

t.test('bad worker plugin options fail registration with one line, before any connection', async (t) => {
  const cases: Array<[object, RegExp]> = [
    [{ handler: () => {}, concurency: 4 }, /concurency/],
    [{ handler: () => {}, logger: console }, /logger/],
    [{ handler: () => {}, concurrency: 0 }, /concurrency/],
    [{ handler: 'not a function' }, /handler must be a function/]
  ]
  for (const [options, message] of cases) {
    const app = Fastify()
    const err = await app.register(anvilWorker, { redis: 'redis://127.0.0.1:1', ...options } as never).ready().then(() => undefined, (e: Error) => e)
    await app.close().catch(() => {})
    t.match(err, { code: 'ANVIL_ERR_INVALID_OPTIONS', message }, JSON.stringify(options))
    t.notOk(err?.message.includes('\n'), 'one line')
  }
})
