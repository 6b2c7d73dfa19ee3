/**
 * Order per key under kills: delivery worker processes (test/fixtures/delivery-worker-process.mjs, each COMMIT held
 * a random moment so a kill lands between an outcome's commit and what follows it) SIGKILLed again and again while
 * keyed messages go to a receiver that fails every third POST. Each key still arrives in publish order, a message's
 * POSTs (repeats after a kill included) before the next one's first, and no message is lost.
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

import { outboundFixture } from '../helpers/outbound.js'
import { deliveryWorkers } from '../fixtures/script.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture

/** Records each POST's key and number as it arrives; fails every third; answers after a random moment. */
async function orderReceiver () {
  const arrived: Array<{ key: string, n: number }> = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      arrived.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { key: string, n: number } }).data)
      const status = arrived.length % 3 === 0 ? 500 : 204
      setTimeout(() => { res.statusCode = status; res.end() }, Math.floor(Math.random() * 100))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrived }
}

t.test('delivery workers SIGKILLed at random points: each key still arrives in publish order, and nothing is lost', async (t) => {
  const KEYS = 5
  const MESSAGES = 60
  const KILLS = 5
  const queueName = 'faults-ordering'
  const receiver = await orderReceiver()
  // Enough retries that no message is given up: every third POST fails, and each kill costs the jobs in flight an attempt.
  const outbound = fixture.open({ queueName, retrySchedule: Array.from({ length: 20 }, () => 100), dispatch: { pollIntervalMs: 100 } })
  const endpoint = await outbound.endpoints.create({ url: receiver.url, tenant: 'kills' })
  // A lock long enough that a live worker on a loaded machine keeps its job: only the killed ones' jobs are taken back.
  const env = {
    REDIS_URL: redis.url, DATABASE_URL: db.url, ANVIL_QUEUE: queueName,
    WORKER_CONCURRENCY: '8', LOCK_DURATION_MS: '3000', STALLED_INTERVAL_MS: '1000', COMMIT_PAUSE_MS: '150'
  }
  const workers = await deliveryWorkers(t, env)
  await outbound.dispatcher.start()
  const published = new Map<string, number[]>()
  for (let n = 0; n < MESSAGES; n++) {
    const key = `k${n % KEYS}`
    await outbound.publish({ type: 'order.paid', data: { key, n }, tenant: 'kills', orderingKey: key })
    published.set(key, [...published.get(key) ?? [], n])
  }
  // Each kill lands while deliveries are in flight, at a random point of one.
  for (let kill = 0; kill < KILLS; kill++) {
    const before = receiver.arrived.length
    await eventually('POSTs since the last kill', () => receiver.arrived.length > before + 3, 60_000)
    await sleep(Math.floor(Math.random() * 300))
    await workers.killOne()
  }
  const delivered = async (): Promise<number> => (await db.query<{ n: number }>(
    "SELECT count(DISTINCT message_id)::int AS n FROM anvil.deliveries WHERE endpoint_id = $1 AND status = 'success'", [endpoint.id]))[0]?.n ?? 0
  await eventually('every message delivered', async () => await delivered() === MESSAGES, 120_000)
  const stalled = await db.query("SELECT 1 FROM anvil.deliveries WHERE error_class = 'stalled'")
  t.comment(`${receiver.arrived.length} POSTs for ${MESSAGES} messages over ${KILLS} kills; ${stalled.length} attempts stalled`)
  t.ok(stalled.length > 0, 'the kills hit deliveries in flight')

  for (const [key, order] of published) {
    const arrived = receiver.arrived.filter((p) => p.key === key).map((p) => p.n)
    const firsts = arrived.filter((n, i) => i === 0 || arrived[i - 1] !== n)
    t.same(firsts, order, `${key}: in publish order, each message's POSTs before the next one's first`)
  }
  // A last release follows its logged success (after a kill, once its job is taken back).
  t.ok(await eventually('nothing of any key left waiting', async () => (await db.query('SELECT 1 FROM anvil.ordered_deliveries')).length === 0, 60_000),
    'nothing of any key is left waiting')
  await workers.stopAll()
})
