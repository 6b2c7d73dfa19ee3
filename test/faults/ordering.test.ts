/**
 * Order per key under faults. PostgreSQL cut from the delivery worker while releases are due, for longer than a
 * release used to try: each head's release waits in the queue, and the key goes on by itself once PostgreSQL is
 * back. Delivery worker processes (test/fixtures/delivery-worker-process.mjs, each COMMIT held a random moment so a
 * kill lands between an outcome's commit and what follows it) SIGKILLed again and again while keyed messages go to
 * a receiver that fails every third POST. Each key still arrives in publish order, a message's POSTs (repeats
 * after a kill included) before the next one's first, and no message is lost.
 */
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

import { openDatabase } from '../../src/db/database.js'
import { createDeliveryStore } from '../../src/delivery-log/delivery-store.js'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { releaseTiming } from '../../src/delivery/ordered-attempt.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { outboundFixture } from '../helpers/outbound.js'
import { startReceiver } from '../helpers/receiver.js'
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

/**
 * PostgreSQL as a delivery worker reaches it: a TCP proxy that cuts it when a release is due. When a release's
 * DELETE (src/sql/outbox.ts `releaseOrdered`) passes and `cut()` says so, every connection through the proxy is
 * dropped, and each new one is closed at once until the worker has knocked `knocks` times; then it is back.
 */
async function cutAtReleases (t: Test, databaseUrl: string, knocks: number, cut: () => boolean, onBack: () => void) {
  const target = new URL(databaseUrl)
  const open = new Set<Socket>()
  const state = { knocked: 0, down: false }
  const server = createTcpServer((client) => {
    client.on('error', () => {})
    if (state.down) {
      client.destroy()
      if (++state.knocked >= knocks) {
        state.down = false
        onBack()
      }
      return
    }
    const upstream = connect(Number(target.port === '' ? 5432 : target.port), target.hostname)
    upstream.on('error', () => {})
    open.add(client).add(upstream)
    client.on('close', () => { open.delete(client); upstream.destroy() })
    upstream.on('close', () => { open.delete(upstream); client.destroy() })
    upstream.on('data', (chunk: Buffer) => client.write(chunk))
    client.on('data', (chunk: Buffer) => {
      if (chunk.includes('WITH gone AS (DELETE') && cut()) {
        state.knocked = 0
        state.down = true
        for (const socket of open) socket.destroy()
        return
      }
      upstream.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { for (const socket of open) socket.destroy(); server.close(() => resolve()) }))
  const url = new URL(databaseUrl)
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`
  return url.toString()
}

t.test('PostgreSQL cut from the delivery worker at two releases, past the tries a release once gave up after: the key goes on by itself, in order, each message once', async (t) => {
  // Releases are tried again 10 ms apart here, so an outage of 40 knocks outlasts the 30 tries (a second apart) a
  // release made before it gave up and left its key waiting for a hand.
  const { retryMs } = releaseTiming
  releaseTiming.retryMs = 10
  t.teardown(() => { releaseTiming.retryMs = retryMs })
  const queueName = 'faults-release'
  // One attempt each: the key's first message succeeds at its last, the second is given up (500), the third succeeds.
  const receiver = await startReceiver((req, res) => {
    res.statusCode = (JSON.parse(req.body) as { data: { n: number } }).data.n === 1 ? 500 : 204
    res.end()
  })
  t.teardown(async () => await receiver.close())
  // Cut at the first release of each of the first two messages (after one POST, then after two).
  const cutAt: number[] = []
  const cut = (): boolean => {
    const posts = receiver.received.length
    if (posts > 2 || cutAt.includes(posts)) return false
    cutAt.push(posts)
    return true
  }
  const postsWhenBack: number[] = []
  const proxyUrl = await cutAtReleases(t, db.url, 40, cut, () => postsWhenBack.push(receiver.received.length))
  const outbound = fixture.open({ queueName, retrySchedule: [], dispatch: { pollIntervalMs: 100 } })
  // Only the delivery worker goes through the proxy: the dispatcher keeps its PostgreSQL.
  const database = openDatabase(proxyUrl, { max: 2 })
  const worker = createDeliveryWorker({ redis: redis.url, store: createDeliveryStore(database), queueName, allowNets: '127.0.0.0/8', jitter: 0, circuit: false })
  // Stopped with the test: the outbox is shared, and the next test's messages are not for this queue.
  t.teardown(async () => {
    await outbound.dispatcher.close()
    await worker.close()
    await database.close()
  })
  await Promise.all([outbound.dispatcher.start(), worker.start()])
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/hook`, tenant: 'cut' })
  const ids: string[] = []
  for (let n = 0; n < 3; n++) ids.push((await outbound.publish({ type: 'order.paid', data: { key: 'c', n }, tenant: 'cut', orderingKey: 'c' })).messageId)
  const state = async (i: number): Promise<string> => await (await outboundInternals(outbound).queue.getJob(`${ids[i] as string}.${endpoint.id}`))?.getState() ?? 'gone'
  await eventually('the last message\'s job completed', async () => await state(2) === 'completed')
  t.same(cutAt, [1, 2], 'PostgreSQL was cut at the release of a success at its last attempt, then at that of a message given up')
  t.same(postsWhenBack, [1, 2], 'while it was out, the next message of the key was not sent')
  t.same(receiver.received.map((req) => (JSON.parse(req.body) as { data: { n: number } }).data.n), [0, 1, 2], 'each message POSTed once, in publish order')
  t.same([await state(0), await state(1), await state(2)], ['completed', 'failed', 'completed'], 'each job ended as its POST did')
  t.match((await outboundInternals(outbound).queue.getJob(`${ids[1] as string}.${endpoint.id}`))?.failedReason, /^http_5xx/, 'the given-up one failed with its answer')
  t.same(await db.query('SELECT message_id FROM anvil.ordered_deliveries'), [], 'nothing of the key is left waiting')
})

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
