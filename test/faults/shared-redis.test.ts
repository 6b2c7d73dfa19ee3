/**
 * Two deployments on one Redis and the default prefix: the queues (inbound, journaled, and outbound) belong to
 * the deployment whose database claimed them first; the other one takes none of their jobs, says whose they
 * are in one line, and works once given a prefix of its own. Real processes, one redis-server (`anvil dev`:
 * test/cli/dev-shared-redis.test.ts).
 */
import t, { type Test } from 'tap'
import { migrate } from '../../src/db/migrate.js'
import { createOutbound, type Outbound } from '../../src/outbox/outbound.js'
import { enqueue, outcome, parseJson, startCli, type Cli } from '../helpers/cli.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { startReceiver, type Receiver } from '../helpers/receiver.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const STARTED = 'anvil worker: dispatching and delivering outgoing webhooks'

interface Deployment { db: TestDatabase, outbound: Outbound, receiver: Receiver, id: string }

async function deployment (t: Test): Promise<Deployment> {
  const db = await TestDatabase.create()
  t.teardown(async () => await db.drop())
  await migrate(db.url)
  const receiver = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(() => receiver.close())
  // In this process only to create endpoints and publish (the outbox), as an application would.
  const outbound = createOutbound({ database: db.url, redis: redis.url })
  t.teardown(async () => await outbound.close())
  await outbound.endpoints.create({ url: `${receiver.url}/hooks` })
  const [row] = await db.query<{ id: string }>('SELECT id FROM anvil.deployment')
  return { db, outbound, receiver, id: row?.id as string }
}

async function publish (d: Deployment, count: number, tag: string): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push((await d.outbound.publish({ type: 'order.paid', data: { tag, i } })).messageId)
  return ids
}

function worker (t: Test, d: Deployment, env: Record<string, string> = {}): Cli {
  return startCli(t, ['worker', '--handler', 'test/fixtures/record-handler.mjs'], {
    env: { REDIS_URL: redis.url, ANVIL_DATABASE_URL: d.db.url, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', HOST: '127.0.0.1', PORT: '0', ...env }
  })
}

const received = (r: Receiver): string[] => r.received.map((one) => String(one.headers['webhook-id'])).sort()
const logged = async (d: Deployment): Promise<Array<{ message_id: string, status: string }>> =>
  await d.db.query('SELECT message_id, status FROM anvil.deliveries ORDER BY message_id')
const journaled = async (d: Deployment): Promise<string[]> =>
  (await d.db.query<{ status: string }>('SELECT status FROM anvil.webhook_events')).map((row) => row.status)

t.test('two anvil workers, two databases, one Redis, default prefix: each event and message handled by its own deployment only', async (t) => {
  const [a, b] = await Promise.all([deployment(t), deployment(t)])
  // An upgraded deployment: jobs already in the unclaimed queue, fanned out before any claim existed.
  const queuedBefore = await publish(a, 10, 'a-before')
  t.equal(await a.outbound.dispatcher.dispatchOnce(), 10)
  const ofB = await publish(b, 20, 'b')
  // And inbound events waiting for a worker, which journals them in its database.
  for (let i = 0; i < 5; i++) await enqueue(redis.url, 'webhooks', `evt_before_${i}`)

  const workerA = worker(t, a)
  await workerA.log(STARTED)
  const workerB = worker(t, b)
  t.equal(await outcome(workerB, workerB.log(STARTED)), 1, 'the second deployment stops instead of consuming')
  t.equal(workerB.stderr, `anvil: queue {anvil}:webhooks on ${redis.url} belongs to deployment ${a.id}, not to this database's (${b.id}): ` +
    'none of its jobs is taken here; give each deployment its own ANVIL_PREFIX, or set ANVIL_DATABASE_URL to the database that owns it\n')
  t.match(workerA.lines.map(parseJson).find((entry) => entry?.msg === 'anvil: the queues are claimed for this deployment'),
    { deployment: a.id, prefix: '{anvil}', queues: ['webhooks', 'outbound'] }, 'the first one said which deployment it is')

  const ofA = [...queuedBefore, ...await publish(a, 20, 'a')]
  for (let i = 0; i < 5; i++) await enqueue(redis.url, 'webhooks', `evt_after_${i}`)
  // Until ten rows are there and none is still being handled (a row is written before its handler runs).
  const settled = (rows: string[]): boolean => rows.every((status) => status !== 'received' && status !== 'processing')
  await eventually('rowsA.length + rowsB.length >= 10 && settled(rowsA) && settled(rowsB)', async () => {
    const [rowsA, rowsB] = [await journaled(a), await journaled(b)]
    return rowsA.length + rowsB.length >= 10 && settled(rowsA) && settled(rowsB) ? true : undefined
  })
  t.same(await journaled(a), Array.from({ length: 10 }, () => 'done'), 'A\'s worker handled and journaled every inbound event')
  t.same(await journaled(b), [], 'B journaled none')
  // Until the rows are there and completed (an attempt's row is written `started` before its POST).
  const completed = (rows: Array<{ status: string }>): boolean => rows.every((row) => row.status !== 'started')
  await eventually('rowsA.length + rowsB.length >= ofA.length && completed(rowsA) && comp…', async () => {
    const [rowsA, rowsB] = [await logged(a), await logged(b)]
    return rowsA.length + rowsB.length >= ofA.length && completed(rowsA) && completed(rowsB) ? true : undefined
  })
  t.same(received(a.receiver), [...ofA].sort(), 'every message of A reached A\'s receiver once, the queued ones too')
  t.same(await logged(a), [...ofA].sort().map((id) => ({ message_id: id, status: 'success' })), 'A\'s log: its own messages, each delivered')
  t.same(await logged(b), [], 'B took no job: nothing in its log')
  t.same(await b.db.query("SELECT status, count(*)::int AS n FROM anvil.outbox GROUP BY status"), [{ status: 'pending', n: 20 }], 'B dispatched nothing: its messages wait')

  // The fix the line gives: a prefix of B's own. B's waiting messages go out, to B's receiver only.
  const workerB2 = worker(t, b, { ANVIL_PREFIX: '{anvil-b}' })
  await workerB2.log(STARTED)
  await eventually('rows.length >= ofB.length && completed(rows)', async () => {
    const rows = await logged(b)
    return rows.length >= ofB.length && completed(rows) ? true : undefined
  })
  t.same(received(b.receiver), [...ofB].sort(), 'every message of B reached B\'s receiver once')
  t.same(await logged(b), [...ofB].sort().map((id) => ({ message_id: id, status: 'success' })), 'B\'s log: its own messages only')
  t.same(received(a.receiver), [...ofA].sort(), 'A\'s receiver got nothing of B')
  t.same((await logged(a)).length, ofA.length, 'nothing of B in A\'s log')
  t.equal(await workerA.stop(), 0)
  t.equal(await workerB2.stop(), 0)
})
