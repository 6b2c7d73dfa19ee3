/**
 * A host clock off from Redis's: real processes whose Date runs ahead (test/fixtures/clock-offset.mjs), a real
 * Redis keeping the real time. The CLI's processes warn once and export the skew; the circuit breaker's open
 * window is Redis's, so a process whose clock runs ahead does not close it early.
 */
import t from 'tap'
import { spawn } from '../helpers/children.js'
import { join } from 'node:path'
import { Queue } from 'bullmq'
import { createCircuitBreaker } from '../../src/delivery/circuit-breaker.js'
import { deliveryJobOptions } from '../../src/delivery/delivery-schedule.js'
import type { OutboundJobData } from '../../src/delivery/delivery-job.js'
import { ROOT, parseJson, startCli } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const SKEW = join(ROOT, 'test', 'fixtures', 'clock-offset.mjs')
const OFFSET_S = 30
const WARNING = 'anvil: this host\'s clock is off from Redis\'s; delayed jobs and retries fire early or late'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const skewed = (offsetMs: number): Record<string, string> => ({ NODE_OPTIONS: `--import ${SKEW}`, CLOCK_OFFSET_MS: String(offsetMs) })

async function skewGauge (port: unknown): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text()
  return Number(/^anvil_clock_skew_seconds (\S+)$/m.exec(text)?.[1])
}

t.test('anvil worker and anvil serve with a clock 30 s ahead: one warning each, and the gauge reads the skew', async (t) => {
  const common = { REDIS_URL: redis.url, HOST: '127.0.0.1', PORT: '0' }
  const worker = startCli(t, ['worker', '--handler', 'test/fixtures/record-handler.mjs'], { env: { ...common, ...skewed(OFFSET_S * 1000) } })
  const serve = startCli(t, ['serve'], { env: { ...common, WEBHOOK_SECRET: 'whsec_clock_0123456789', ...skewed(OFFSET_S * 1000) } })
  const honest = startCli(t, ['worker', '--handler', 'test/fixtures/record-handler.mjs'], { env: common })
  const { port: workerPort } = await worker.log('anvil worker: health and metrics listening')
  const { port: servePort } = await serve.log('anvil serve: listening')
  const { port: honestPort } = await honest.log('anvil worker: health and metrics listening')
  for (const cli of [worker, serve]) t.match(await cli.log(WARNING), { level: 40, limitSeconds: 2 })
  await honest.log('anvil worker: started')
  const honestSkew = await skewGauge(honestPort)
  for (const [name, port] of [['worker', workerPort], ['serve', servePort]] as const) {
    const skew = await skewGauge(port)
    t.ok(Math.abs(skew - OFFSET_S) < 1, `${name}: anvil_clock_skew_seconds ${skew} reads about +${OFFSET_S}`)
  }
  t.ok(Math.abs(honestSkew) < 1, `an honest clock reads about 0 (${honestSkew})`)
  for (const [name, cli] of [['worker', worker], ['serve', serve], ['honest worker', honest]] as const) {
    t.equal(await cli.stop(), 0)
    const warnings = cli.lines.filter((line) => parseJson(line)?.msg === WARNING)
    t.equal(warnings.length, name === 'honest worker' ? 0 : 1, `${name}: ${name === 'honest worker' ? 'no warning' : 'the warning once'}`)
  }
})

t.test('a delivery worker whose clock runs 10 min ahead does not close a circuit another process opened', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(() => receiver.close())
  const queueName = 'skewed-delivery'
  // Opened here, on the real clock, for 60 s: Redis's TIME decides when it half-opens.
  const client = redis.client()
  t.teardown(() => client.disconnect())
  const breaker = createCircuitBreaker(client, '{t}', { failureThreshold: 1, openMs: 60_000, probeLeaseMs: 15_000 })
  t.equal(await breaker.record('ep_1', false, { probe: false, dirty: false }), 'opened')

  const child = spawn(process.execPath, ['--import', SKEW, join(ROOT, 'test', 'fixtures', 'delivery-worker.mjs')], {
    env: { ...process.env, REDIS_URL: redis.url, QUEUE: queueName, OPEN_MS: '60000', CLOCK_OFFSET_MS: String(10 * 60_000) }, stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => { if (chunk.toString().includes('ready')) resolve() })
    child.once('exit', (code) => reject(new Error(`the worker exited with ${String(code)}`)))
  })
  const queue = new Queue<OutboundJobData>(queueName, { connection: { url: redis.url }, prefix: '{t}' })
  t.teardown(() => queue.close())
  const job = await queue.add('deliver', {
    messageId: 'msg_1', endpointId: 'ep_1', eventType: 'invoice.paid', url: `${receiver.url}/ep_1`, body: '{}', scheme: 'standard-webhooks'
  }, deliveryJobOptions([60_000]))
  // The worker decided once the job is delayed (put back to wait for the circuit) or done (it probed).
  const state = await eventually('now === \'delayed\' || now === \'completed\' || now === \'failed\' ? now : …', async () => { const now = await job.getState(); return now === 'delayed' || now === 'completed' || now === 'failed' ? now : undefined })
  t.equal(state, 'delayed', 'put back to wait for the circuit')
  t.equal(receiver.received.length, 0, 'no probe was sent: the circuit is still open on Redis\'s clock')
  t.equal(await client.exists('{t}:outbound:circuit:ep_1:probe'), 0, 'and no probe lease taken')
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
})
