/**
 * Health routes: live answers while the process does; ready follows Redis (503 while it is away, 200 again
 * on its own once it is back) and the worker, where there is one.
 */
import t from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import anvil, { anvilHealth, anvilWorker } from '../../index.js'
import { TestRedis } from '../helpers/redis.js'
import { SECRET } from '../helpers/app.js'
import { eventually } from '../helpers/eventually.js'

/** Bound on waiting for a state change: an outer guard, not a timing assertion. */
const GIVE_UP_MS = 20_000

async function statusUntil (read: () => Promise<number>, wanted: number): Promise<number> {
  return await eventually(`status ${wanted}`, async () => { const status = await read(); return status === wanted ? status : undefined }, GIVE_UP_MS)
}

t.test('ingress app: live 200; ready 503 while Redis is down, back to 200 by itself', async (t) => {
  const redis = await TestRedis.start()
  t.teardown(() => redis.stop())
  const app = Fastify({ logger: false })
  await app.register(anvil, { redis: redis.url, secret: SECRET, queueName: 'health-ingress', enqueueTimeoutMs: 500 })
  await app.register(anvilHealth)
  await app.ready()
  t.teardown(() => app.close())
  const get = async (url: string): Promise<{ statusCode: number, body: unknown }> => {
    const res = await app.inject({ method: 'GET', url })
    return { statusCode: res.statusCode, body: res.json() }
  }

  t.same(await get('/health/live'), { statusCode: 200, body: { status: 'live' } })
  t.same(await get('/health/ready'), { statusCode: 200, body: { status: 'ready', redis: 'up' } })

  await redis.kill()
  const down = await get('/health/ready')
  t.same(down, { statusCode: 503, body: { status: 'not ready', redis: 'down' } }, 'not ready at once')
  t.equal((await get('/health/live')).statusCode, 200, 'live stays 200: restarting would not bring Redis back')

  await redis.startProcess()
  t.equal(await statusUntil(async () => (await get('/health/ready')).statusCode, 200), 200, 'ready again, no restart')
})

t.test('timeoutMs bounds the PING without `redis` too: through the anvil plugin, not its enqueue timeout', async (t) => {
  const redis = await TestRedis.start()
  t.teardown(() => redis.stop())
  const app = Fastify({ logger: false })
  // An enqueue timeout far past the pause below: only the health timeout can answer "down" while Redis is paused.
  await app.register(anvil, { redis: redis.url, secret: SECRET, queueName: 'health-timeout', enqueueTimeoutMs: 60_000 })
  await app.register(anvilHealth, { timeoutMs: 200 })
  await app.ready()
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode, 200)
  // Redis holds every command for 3 s (the pause ends by itself), so a PING waits that long for its PONG.
  await redis.command('client', 'pause', 3000, 'ALL')
  const paused = await app.inject({ method: 'GET', url: '/health/ready' })
  t.same([paused.statusCode, paused.json()], [503, { status: 'not ready', redis: 'down' }], 'down within the health timeout')
  t.equal(await statusUntil(async () => (await app.inject({ method: 'GET', url: '/health/ready' })).statusCode, 200), 200, 'ready once the pause ends')
})

t.test('readiness is logged once per change of state, not on every probe', async (t) => {
  const redis = await TestRedis.start()
  t.teardown(() => redis.stop())
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = Fastify({ logger: { level: 'info', stream } })
  await app.register(anvil, { redis: redis.url, secret: SECRET, queueName: 'health-lines', enqueueTimeoutMs: 500 })
  await app.register(anvilHealth)
  await app.ready()
  t.teardown(() => app.close())
  const probe = async (): Promise<number> => (await app.inject({ method: 'GET', url: '/health/ready' })).statusCode
  const readiness = (): Array<Record<string, unknown>> => lines.filter((l) => /^anvil: (not ready|still not ready|ready again)$/.test(String(l.msg)))

  for (let i = 0; i < 5; i++) t.equal(await probe(), 200)
  t.same(readiness(), [], 'ready from the start: nothing to say')
  await redis.kill()
  for (let i = 0; i < 10; i++) t.equal(await probe(), 503)
  t.match(readiness(), [{ level: 40, msg: 'anvil: not ready', status: 'not ready', redis: 'down' }], 'ten failed probes, one line')
  await redis.startProcess()
  t.equal(await statusUntil(probe, 200), 200)
  for (let i = 0; i < 5; i++) t.equal(await probe(), 200)
  t.match(readiness(), [{ msg: 'anvil: not ready' }, { level: 30, msg: 'anvil: ready again', redis: 'up' }])
  t.equal(readiness().length, 2)
})

t.test('worker app: ready needs the worker running; a stopped worker is 503', async (t) => {
  const redis = await TestRedis.start()
  t.teardown(() => redis.stop())
  const app = Fastify({ logger: false })
  await app.register(anvilWorker, { redis: redis.url, queueName: 'health-worker', handler: () => {}, sweepIntervalMs: 0 })
  await app.register(anvilHealth, { redis: redis.url, prefix: '/_health' })
  await app.ready()
  t.teardown(() => app.close())
  const ready = await app.inject({ method: 'GET', url: '/_health/ready' })
  t.same([ready.statusCode, ready.json()], [200, { status: 'ready', redis: 'up', worker: 'running' }])
  await app.anvilWorker.close()
  const stopped = await app.inject({ method: 'GET', url: '/_health/ready' })
  t.same([stopped.statusCode, stopped.json()], [503, { status: 'not ready', redis: 'up', worker: 'stopped' }])
})

t.test('nothing to ping: the app refuses to start, with one line', async (t) => {
  const app = Fastify({ logger: false })
  await app.register(anvilHealth)
  await t.rejects(async () => { await app.ready() }, { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /health needs `redis`/ })
  const bad = Fastify({ logger: false })
  await t.rejects(async () => { await bad.register(anvilHealth, { redis: 'redis://127.0.0.1:1', timeoutMs: 0 }); await bad.ready() },
    { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /timeoutMs/ })
  // A misspelt option is refused, not silently ignored (`timeout` would leave the default in force).
  const misspelt = Fastify({ logger: false })
  await t.rejects(async () => { await misspelt.register(anvilHealth, { redis: 'redis://127.0.0.1:1', timeout: 50 } as never); await misspelt.ready() },
    { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /timeout/ })
})
