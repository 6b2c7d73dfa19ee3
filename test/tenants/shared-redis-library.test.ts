/**
 * Two deployments built with the library (not the CLI) on two databases, one Redis and the default prefix (issue
 * 33, item 7): B's `createWorker` with a journal, `createDeliveryWorker` on its database's store, and its outbox's
 * dispatcher each refuse to start with ANVIL_ERR_FOREIGN_QUEUE, as `anvil worker` does
 * (test/faults-shared-redis.test.ts), so A's inbound events and outgoing messages are all A's. Before, B's
 * worker took 26 of A's 40 messages and failed them for good, and journaled 50 of A's 100 events in B's database.
 */
import t, { type Test } from 'tap'
import { createOutbound, outboundInternals, type Outbound } from '../../src/outbox/outbound.js'
import { createDeliveryWorker, type DeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { createWorker, type AnvilWorker } from '../../src/worker/worker.js'
import { Ingress } from '../../src/inbound/ingress.js'
import { resolveIngressOptions } from '../../src/inbound/ingress-options.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { startReceiver } from '../helpers/receiver.js'

import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const dbA = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const dbB = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const receiver = beforeAll(t, async () => await startReceiver((_req, res) => { res.statusCode = 204; res.end() }), async (receiver) => await receiver.close())

interface Deployment { db: TestDatabase, outbound: Outbound, delivery: DeliveryWorker, worker: AnvilWorker, handled: string[] }

function deployment (t: Test, db: TestDatabase): Deployment {
  const outbound = createOutbound({ database: db.url, redis: redis.url, retrySchedule: [], dispatch: { pollIntervalMs: 100 } })
  const delivery = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, allowNets: '127.0.0.0/8' })
  const handled: string[] = []
  const worker = createWorker(async (event) => { handled.push(event.id) }, { redis: redis.url, journal: { database: db.url }, sweepIntervalMs: 0 })
  t.teardown(async () => { await worker.close(); await delivery.close(); await outbound.close() })
  return { db, outbound, delivery, worker, handled }
}

const ownerOf = async (db: TestDatabase): Promise<string> => (await db.query<{ id: string }>('SELECT id FROM anvil.deployment'))[0]?.id as string

t.test('library deployments on one Redis and prefix: the second refuses at start, and loses none of the first\'s messages', async (t) => {
  const a = deployment(t, dbA)
  const b = deployment(t, dbB)
  await a.worker.start()
  await a.delivery.start()
  await a.outbound.dispatcher.start()
  const [idA, idB] = [await ownerOf(dbA), await ownerOf(dbB)]
  const refusal = (queue: string): { code: string, message: string } => ({
    code: 'ANVIL_ERR_FOREIGN_QUEUE',
    message: `Queue {anvil}:${queue} on ${redis.url} belongs to deployment ${idA}, not to this database's (${idB}): none of its jobs is taken here; ` +
      'give each deployment its own `prefix` (or Redis), or open it on the database that owns the queue'
  })
  await t.rejects(b.worker.start(), refusal('webhooks'), 'createWorker with a journal')
  await t.rejects(b.delivery.start(), refusal('outbound'), 'createDeliveryWorker on the database\'s store')
  await t.rejects(b.outbound.dispatcher.start(), refusal('outbound'), 'createOutbound\'s dispatcher')
  t.equal(b.worker.running, false)

  await a.outbound.endpoints.create({ url: `${receiver.url}/a` })
  await b.outbound.endpoints.create({ url: `${receiver.url}/b` })
  const published: string[] = []
  for (let i = 0; i < 40; i++) published.push((await a.outbound.publish({ type: 'order.paid', data: { i } })).messageId)
  // B's application publishes to its own outbox; nothing of it reaches A's queue.
  await b.outbound.publish({ type: 'order.paid', data: { b: true } })
  await t.rejects(b.outbound.dispatcher.dispatchOnce(), { code: 'ANVIL_ERR_FOREIGN_QUEUE' }, 'nor by hand')
  // A loaded machine may take longer than the default 1.5 s to answer an add.
  const ingress = new Ingress(resolveIngressOptions({ redis: redis.url, secret: 'unused_0123456789', enqueueTimeoutMs: 30_000 }))
  t.teardown(async () => await ingress.close())
  for (let i = 0; i < 100; i++) await ingress.enqueue({ id: `evt_${i}`, type: 'test.ping' }, { eventId: `evt_${i}` })

  await eventually('A\'s 40 deliveries', async () => (await dbA.query("SELECT 1 FROM anvil.deliveries WHERE status = 'success'")).length === 40, 30_000)
  await eventually('A\'s 100 events handled', () => a.handled.length === 100, 30_000)
  const delivered = receiver.received.filter((one) => one.url === '/a').map((one) => String(one.headers['webhook-id'])).sort()
  t.same(delivered, [...published].sort(), 'every one of A\'s messages reached A\'s endpoint')
  t.same(await dbB.query('SELECT message_id FROM anvil.deliveries'), [], 'B\'s log holds none of them')
  t.equal((await dbA.query("SELECT 1 FROM anvil.webhook_events WHERE status = 'done'")).length, 100, 'A journaled every event')
  t.same(await dbB.query('SELECT id FROM anvil.webhook_events'), [], 'B journaled none')
  t.same(b.handled, [], 'and handled none')
  t.equal(receiver.received.filter((one) => one.url === '/b').length, 0, 'B\'s message waits in B\'s outbox')
})
