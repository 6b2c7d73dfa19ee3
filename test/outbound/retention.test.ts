/**
 * Outbox retention: dispatched and failed messages idle past the age go; pending ones, recent ones and ones with a
 * retry still due stay; the delivery log keeps the age's days (a day past it is dropped whole: test/outbound/
 * delivery-log-days.test.ts; here the rows wait in the DEFAULT partition, the one deleted row by row); 0 keeps
 * everything; the process that dispatches prunes on its own timer, a batch per statement, on an index.
 */
import t from 'tap'
import { openDatabase } from '../../src/db/database.js'
import { MAX_RETRY_WAIT_MS } from '../../src/delivery/delivery-schedule.js'
import { createOutbound, outboundInternals } from '../../src/outbox/outbound.js'
import { deleteIdleMessages, idleSeconds, RETENTION_FLOOR_MS, retentionStatements } from '../../src/outbox/outbox-retention.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db } = fixture
const database = beforeAll(t, async () => openDatabase(db.url), async (database) => await database.close())

interface Seed {
  status: 'pending' | 'dispatched' | 'failed'
  /** Days ago it was created; dispatched (or last tried) at the same time unless `activeDaysAgo` says otherwise. */
  daysAgo: number
  activeDaysAgo?: number
  /** Days ago of each delivery attempt logged for it. */
  attempts?: number[]
}

/** Rows as the system writes them, back-dated: a message and its attempts. */
async function seed (rows: Record<string, Seed>): Promise<void> {
  for (const [id, row] of Object.entries(rows)) {
    const active = row.activeDaysAgo ?? row.daysAgo
    await db.query(`INSERT INTO anvil.outbox (id, type, public_type, data, status, created_at, next_attempt_at, dispatched_at)
      VALUES ($1, 'order.paid', 'order.paid', '{}', $2, now() - make_interval(secs => $3::float8 * 86400), now() - make_interval(secs => $4::float8 * 86400),
        CASE WHEN $2 = 'dispatched' THEN now() - make_interval(secs => $4::float8 * 86400) END)`, [id, row.status, row.daysAgo, active])
    await attempts(id, row.attempts ?? [])
  }
}

async function attempts (messageId: string, daysAgo: number[]): Promise<void> {
  for (const [i, days] of daysAgo.entries()) {
    await db.query(`INSERT INTO anvil.deliveries (message_id, endpoint_id, attempt, status, duration_ms, payload_sha256, created_at)
      VALUES ($1, 'ep_1', $2, 'failed', 5, 'x', now() - make_interval(secs => $3::float8 * 86400))`, [messageId, i + 1, days])
  }
}

async function left (): Promise<{ messages: string[], deliveries: string[] }> {
  const messages = await db.query<{ id: string }>('SELECT id FROM anvil.outbox')
  const deliveries = await db.query<{ message_id: string }>('SELECT message_id FROM anvil.deliveries')
  return { messages: messages.map((r) => r.id).sort(), deliveries: deliveries.map((r) => r.message_id).sort() }
}

t.beforeEach(async () => { await db.query('TRUNCATE anvil.outbox, anvil.deliveries') })

t.test('old finished messages go, and attempts older than the age; recent, pending and re-sent messages stay', async (t) => {
  await seed({
    old_delivered: { status: 'dispatched', daysAgo: 40, attempts: [40, 40] },
    old_no_endpoint: { status: 'dispatched', daysAgo: 31 },
    old_dispatch_failed: { status: 'failed', daysAgo: 45 },
    recent: { status: 'dispatched', daysAgo: 29, attempts: [29] },
    old_undispatched: { status: 'pending', daysAgo: 90 },
    old_dispatch_retrying: { status: 'pending', daysAgo: 40, activeDaysAgo: -0.01 },
    old_resent_yesterday: { status: 'dispatched', daysAgo: 40, attempts: [40, 1] },
    old_dispatched_late: { status: 'dispatched', daysAgo: 40, activeDaysAgo: 2 }
  })
  await attempts('already_gone', [35]) // its message was deleted before
  await attempts('gone_recently', [3])

  const pruned = await deleteIdleMessages(database, 30, 1)
  t.same(pruned, { messages: 3, days: [], deliveries: 4 }, 'a batch of one per statement still reaches them all')
  t.same(await left(), {
    messages: ['old_dispatch_retrying', 'old_dispatched_late', 'old_resent_yesterday', 'old_undispatched', 'recent'],
    deliveries: ['gone_recently', 'old_resent_yesterday', 'recent']
  }, 'the log keeps the age\'s attempts, whatever their message: the 40-day-old attempt of a message re-sent yesterday goes')
  t.same(await deleteIdleMessages(database, 30), { messages: 0, days: [], deliveries: 0 }, 'a second pass finds nothing')
})

t.test('a short retention still keeps a message whose last attempt may have a retry due', async (t) => {
  t.ok(RETENTION_FLOOR_MS > MAX_RETRY_WAIT_MS, 'the floor covers the longest retry wait')
  t.equal(idleSeconds(1) * 1000, RETENTION_FLOOR_MS, 'one day is raised to the floor')
  t.equal(idleSeconds(30), 30 * 86400)
  const floorDays = RETENTION_FLOOR_MS / 86_400_000
  await seed({
    retry_due: { status: 'dispatched', daysAgo: 12, attempts: [12, 11, floorDays - 0.1] },
    given_up: { status: 'dispatched', daysAgo: 12, attempts: [12, 11, floorDays + 0.1] }
  })
  t.match(await deleteIdleMessages(database, 1), { messages: 1 })
  t.same((await left()).messages, ['retry_due'])
  t.ok((await left()).deliveries.includes('retry_due'), 'the attempt whose retry may be due is kept')
})

t.test('0 keeps everything, however old', async (t) => {
  await seed({ ancient: { status: 'dispatched', daysAgo: 3650, attempts: [3650] } })
  await attempts('orphan', [3650])
  // Closed with this test: its passes (they still make the log's days ahead) would take the next tests' turns.
  const outbound = createOutbound({ database: db.url, redis: fixture.redis.url, queueName: 'keep', retentionDays: 0, retentionIntervalMs: 10 })
  t.teardown(async () => await outbound.close())
  t.same(await outbound.prune(), { messages: 0, days: [], deliveries: 0 })
  outbound.startRetention()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(await left(), { messages: ['ancient'], deliveries: ['ancient', 'orphan'] })
})

t.test('the dispatching process prunes on its timer and says what it deleted', async (t) => {
  const lines: Array<{ obj: unknown, msg: string | undefined }> = []
  const logger = { info: (obj: unknown, msg?: string) => lines.push({ obj, msg }), warn () {}, error () {} }
  // Closed with this test, so its timer takes nothing from the next ones.
  const outbound = createOutbound({ database: db.url, redis: fixture.redis.url, queueName: 'timer', retentionIntervalMs: 50, logger })
  t.teardown(async () => await outbound.close())
  await seed({ old: { status: 'dispatched', daysAgo: 31, attempts: [31] }, young: { status: 'dispatched', daysAgo: 1, attempts: [1] } })
  outbound.startRetention()
  await eventually('!(left()).messages.includes(\'old\')', async () => !(await left()).messages.includes('old'))
  t.same(await left(), { messages: ['young'], deliveries: ['young'] })
  t.same(lines.filter((line) => /retention/.test(line.msg ?? '')).map((line) => line.obj), [{ messages: 1, days: [], deliveries: 1 }], 'one line, for the pass that deleted')
})

t.test('the plugin prunes only where it dispatches (runDispatcher), once the app is ready', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { default: anvilOutbound } = await import('../../plugins/outbound.js')
  await seed({ old: { status: 'dispatched', daysAgo: 31, attempts: [31] } })
  const publisher = Fastify()
  await publisher.register(anvilOutbound, { database: db.url, redis: fixture.redis.url, queueName: 'plugin', retentionIntervalMs: 20 })
  await publisher.ready()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same((await left()).messages, ['old'], 'without runDispatcher no pass runs')
  t.same(await publisher.anvilOutbound.prune(), { messages: 1, days: [], deliveries: 1 }, 'until asked')
  await publisher.close()
  await seed({ old: { status: 'dispatched', daysAgo: 31, attempts: [31] } })
  const dispatching = Fastify()
  await dispatching.register(anvilOutbound, { database: db.url, redis: fixture.redis.url, queueName: 'plugin', runDispatcher: true })
  await dispatching.ready()
  await eventually('(left()).messages.length === 0', async () => (await left()).messages.length === 0)
  t.same(await left(), { messages: [], deliveries: [] }, 'the pass at start took it')
  await dispatching.close()
})

t.test('rows the system wrote itself: published, dispatched, attempted, then aged', async (t) => {
  const outbound = fixture.open({ queueName: 'real' })
  const endpoint = await outbound.endpoints.create({ url: 'https://shop.example/hook', tenant: 'real' })
  const { messageId: sent } = await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 'real' })
  t.equal(await outbound.dispatcher.dispatchOnce(), 1)
  await outboundInternals(outbound).store.recordAttempt?.({ messageId: sent, endpointId: endpoint.id, attempt: 1, durationMs: 3, responseHead: '', payloadSha256: 'x', success: true })
  const { messageId: waiting } = await outbound.publish({ type: 'order.paid', data: { n: 2 }, tenant: 'real' })
  const age = 'make_interval(days => 40)'
  await db.query(`UPDATE anvil.outbox SET created_at = created_at - ${age}, next_attempt_at = next_attempt_at - ${age}, dispatched_at = dispatched_at - ${age}`)
  // An id says its row's second (migration 0028): aged with it.
  await db.query(`UPDATE anvil.deliveries SET created_at = created_at - ${age}, id = anvil.delivery_id(created_at - ${age})`)
  t.same(await outbound.prune(), { messages: 1, days: [], deliveries: 1 })
  t.same(await left(), { messages: [waiting], deliveries: [] }, 'the undispatched one stays')
})

t.test('a pass reads indexes, not the tables', async (t) => {
  const client = await db.pool(1).connect()
  t.teardown(() => client.release())
  await client.query('SET enable_seqscan = off')
  const sql = retentionStatements(database)
  const plan = async (text: string): Promise<string> =>
    (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, [idleSeconds(30), 1000])).rows.map((row) => row['QUERY PLAN']).join('\n')
  const messages = await plan(sql.messages)
  t.match(messages, /outbox_finished/, 'candidates from the finished messages\' index (0003)')
  t.match(messages, /deliveries_\w+_message_id_endpoint_id_idx/, 'their recent attempts by message, each day\'s deliveries_message')
  t.notMatch(messages, /Seq Scan/)
})

t.test('a bad retention is refused with one line', async (t) => {
  t.throws(() => fixture.open({ retentionDays: -1 }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /retentionDays/ })
  t.throws(() => fixture.open({ retentionIntervalMs: 1.5 }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /retentionIntervalMs/ })
})
