/**
 * A Redis outage is not a message's failure: with one dispatch attempt allowed (so any attempt an outage used
 * would fail its message for good), Redis is SIGKILLed at random points while messages are published into
 * PostgreSQL and dispatched; the messages stay pending with no attempt used, and once Redis is back (the same
 * port, AOF with fsync on every write) every message reaches a real receiver exactly once.
 */
import t from 'tap'
import { createDeliveryWorker, type DeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { createOutbound, outboundInternals } from '../../src/outbox/outbound.js'

import { TestDatabase } from '../helpers/pg.js'
import { startReceiver } from '../helpers/receiver.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const ROUNDS = 3
const PER_ROUND = 80

const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const redis = beforeAll(t, async () => await TestRedis.start(['--appendonly', 'yes', '--appendfsync', 'always']), async (redis) => await redis.stop())
const receiver = beforeAll(t, async () => await startReceiver(), async (receiver) => await receiver.close())
const lines: string[] = []
const logger = { info () {}, warn (_: unknown, msg: string) { lines.push(msg) }, error (_: unknown, msg: string) { lines.push(msg) } }
const outbound = beforeAll(t, async () => createOutbound({
  database: db.url, redis: redis.url, logger, dispatch: { attempts: 1, retryBaseMs: 10, retryMaxMs: 50, pollIntervalMs: 50, batchSize: 10 }
}), async (outbound) => await outbound.close())
let delivery: DeliveryWorker | undefined
t.teardown(async () => await delivery?.close())

const startDelivery = async (): Promise<void> => {
  // No per-endpoint gate (a cap at the concurrency): on a loaded machine a 500 ms delivery marks the one receiver
  // slow, and its jobs come back paced, one a second; pacing is test/outbound/endpoint-cap.test.ts's contract, not this one's.
  delivery = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, allowNets: '127.0.0.0/8', maxInFlightPerEndpoint: 10 })
  await delivery.start()
}
const count = async (where: string): Promise<number> =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM anvil.outbox WHERE ${where}`))[0]?.n ?? -1

t.test('Redis killed at random points while messages are published and dispatched: none fails, each is delivered once', async (t) => {
  await outbound.endpoints.create({ url: `${receiver.url}/hook` })
  await startDelivery()
  await outbound.dispatcher.start()
  const ids: string[] = []
  const publish = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) ids.push((await outbound.publish({ type: 'order.paid', data: { n: ids.length } })).messageId)
  }
  await publish(20)
  await receiver.waitFor(20)
  // The delivery worker stops first, so the count at the receiver is the dispatcher's alone (an attempt Redis
  // lost mid-flight is the delivery worker's own at-least-once contract).
  await delivery?.close()
  delivery = undefined

  for (let round = 0; round < ROUNDS; round++) {
    const killAt = 1 + Math.floor(Math.random() * (PER_ROUND - 2))
    await publish(killAt)
    await redis.kill()
    await publish(PER_ROUND - killAt)
    // Passes that run while Redis is down, each after every message was made due: an outage that used an
    // attempt would fail its message here, with one attempt allowed.
    for (let pass = 0; pass < 3; pass++) {
      await db.query("UPDATE anvil.outbox SET next_attempt_at = now() WHERE status = 'pending'")
      await outbound.dispatcher.dispatchOnce()
    }
    t.equal(await count("status = 'failed'"), 0, `round ${round + 1}: no message failed while Redis was down`)
    t.equal(await count("status = 'pending' AND attempts > 0"), 0, `round ${round + 1}: no pending message used an attempt`)
    t.ok(await count("status = 'pending'") > 0, `round ${round + 1}: the outage's messages wait`)
    await redis.startProcess()
    await eventually('count("status <> \'dispatched\'") === 0', async () => await count("status <> 'dispatched'") === 0, 30_000)
  }

  await startDelivery()
  await receiver.waitFor(ids.length)
  await eventually('(db.query("SELECT 1 FROM anvil.deliveries WHERE status = \'success\'"))…', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE status = 'success'")).length >= ids.length, 30_000)
  const got = receiver.received.map((r) => String(r.headers['webhook-id']))
  t.equal(got.length, ids.length, 'as many deliveries as messages')
  t.same(new Set(got), new Set(ids), 'every message delivered, none twice')
  t.same(await db.query('SELECT status, attempts, count(*)::int AS n FROM anvil.outbox GROUP BY 1, 2'),
    [{ status: 'dispatched', attempts: 1, n: ids.length }], 'each dispatched on the one attempt it had')
  t.ok(lines.includes('anvil outbound: Redis is unavailable; dispatch waits for it'), 'the wait is logged')
})

t.test('Redis out of memory: the fan-out it refuses gives its attempt back, and the message goes once memory is back', async (t) => {
  const before = receiver.received.length
  await redis.command('config', 'set', 'maxmemory', '1')
  const { messageId } = await outbound.publish({ type: 'order.paid', data: { oom: true } })
  const row = async (): Promise<{ status: string, attempts: number, last_error: string | null } | undefined> =>
    (await db.query<{ status: string, attempts: number, last_error: string | null }>('SELECT status, attempts, last_error FROM anvil.outbox WHERE id = $1', [messageId]))[0]
  // Read between two tries (the dispatcher claims it again each poll, counting an attempt it then gives back): with
  // one attempt allowed, a refusal that used it would leave the message failed, never pending again.
  await eventually('the message pending again, refused by Redis (OOM), its attempt given back', async () => {
    const seen = await row()
    return seen?.status === 'pending' && seen.attempts === 0 && /^Redis unavailable: .*OOM/.test(seen.last_error ?? '')
  }, 30_000)
  t.match(await row(), { status: 'pending' }, 'refused by Redis, not failed, no attempt used')
  await redis.command('config', 'set', 'maxmemory', '0')
  await receiver.waitFor(before + 1)
  await eventually('(row())?.status === \'dispatched\'', async () => (await row())?.status === 'dispatched')
  t.match(await row(), { status: 'dispatched', attempts: 1 })
  t.same(receiver.received.slice(before).map((r) => r.headers['webhook-id']), [messageId], 'delivered once')
})
