/**
 * `anvil worker` with ANVIL_DATABASE_URL and no handler: it dispatches the outbox and delivers outgoing webhooks;
 * `anvil dev` reaches a receiver on loopback, as docs/outgoing-webhooks.md says before its first example.
 * `anvil worker --role` (ANVIL_WORKER_ROLE): an outbound-only worker never takes an inbound job, an inbound-only
 * one never dispatches the outbox, with one command line for both (--handler is ignored by the outbound role).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { createOutbound } from '../../src/outbox/outbound.js'
import { enqueue, inspect, parseJson, ROOT, runCli, startCli, tempDir } from '../helpers/cli.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const outbound = beforeAll(t, async () => createOutbound({ database: db.url, redis: redis.url }), async (outbound) => await outbound.close())
/** The roles' workers' environment. */
const env = beforeAll(t, async () => ({ REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', HOST: '127.0.0.1', PORT: '0' }))

// One worker for both contracts (a start costs about 1 s of CPU): the old rows are there before it starts.
t.test('anvil worker with ANVIL_DATABASE_URL, no handler, ANVIL_OUTBOUND_RETENTION_DAYS=45', async (t) => {
  const back = (days: number): string => `now() - make_interval(days => ${days})`
  await db.query(`INSERT INTO anvil.outbox (id, type, public_type, data, status, created_at, next_attempt_at, dispatched_at, attempts) VALUES
    ('old_50d', 'a.b', 'a.b', '{}', 'dispatched', ${back(50)}, ${back(50)}, ${back(50)}, 1),
    ('old_40d', 'a.b', 'a.b', '{}', 'dispatched', ${back(40)}, ${back(40)}, ${back(40)}, 1),
    ('old_60d_retrying', 'a.b', 'a.b', '{}', 'pending', ${back(60)}, now() + interval '1 day', NULL, 3)`)
  await db.query(`INSERT INTO anvil.deliveries (message_id, endpoint_id, attempt, status, duration_ms, payload_sha256, created_at)
    VALUES ('old_50d', 'ep_x', 1, 'success', 3, 'x', ${back(50)}), ('old_40d', 'ep_x', 1, 'success', 3, 'x', ${back(40)})`)
  const receiver = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(() => receiver.close())
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/hooks` })
  const worker = startCli(t, ['worker'], {
    env: { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', ANVIL_OUTBOUND_RETENTION_DAYS: '45', HOST: '127.0.0.1', PORT: '0' }
  })

  await t.test('ANVIL_OUTBOUND_RETENTION_DAYS reaches the worker, which prunes the outbox as it starts', async (t) => {
    t.match(await worker.log('anvil outbound: retention deleted idle messages and their delivery log'), { messages: 1, deliveries: 1 })
    const left = await db.query<{ id: string }>("SELECT id FROM anvil.outbox WHERE id LIKE 'old\_%' ORDER BY id")
    t.same(left.map((row) => row.id), ['old_40d', 'old_60d_retrying'], '45 days, not the default 30; the pending one whatever its age')
    const bad = await runCli(['worker'], { env: { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_OUTBOUND_RETENTION_DAYS: '30d' } })
    t.equal(bad.code, 1)
    t.match(bad.stderr, /^anvil: invalid configuration: ANVIL_OUTBOUND_RETENTION_DAYS must be a whole number of days, at least 0 \(got "30d"\)$/m)
  })

  await t.test('no handler, a database: outgoing only, from publish to a signed delivery logged in PostgreSQL', async (t) => {
    const { port } = await worker.log('anvil worker: health and metrics listening')
    t.match(await worker.log('anvil worker: no --handler: inbound events are not consumed here and wait in Redis; only outgoing webhooks are delivered (give --handler, or --role outbound for an outgoing-only worker)'),
      { level: 40, queue: 'webhooks' }, 'said at warn: the inbound queue is not consumed')
    await worker.log('anvil worker: dispatching and delivering outgoing webhooks')
    const { messageId } = await outbound.publish({ type: 'order.paid', data: { total: 5 } })
    await receiver.waitFor(1)
    const [request] = receiver.received
    t.match(new Webhook(endpoint.secret).verify(request?.body ?? '', request?.headers as Record<string, string>), { id: messageId, type: 'order.paid', data: { total: 5 } })
    // An attempt's row is written `started` before its POST: wait for it to be completed.
    await eventually('the attempt to be answered', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status <> 'started'", [messageId])).length > 0)
    t.match(await db.query('SELECT status, http_status FROM anvil.deliveries WHERE message_id = $1', [messageId]), [{ status: 'success', http_status: 204 }])
    const metrics = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text()
    t.match(metrics, /^anvil_outbox_pending \d+/m, 'the outbox gauges')
    t.match(metrics, /^anvil_outbound_deliveries_total\{.*outcome="success".*\} 1/m, 'the delivery counted')
    t.equal((await fetch(`http://127.0.0.1:${String(port)}/health/ready`)).status, 200)
    t.equal(await worker.stop(), 0)
    t.notMatch(worker.output, /whsec_/, 'no secret in the log')
  })
})

t.test('anvil dev with a database migrates it and sends outgoing webhooks too, to a receiver on loopback without ANVIL_OUTBOUND_ALLOW_NETS', async (t) => {
  const other = await TestDatabase.create()
  t.teardown(async () => await other.drop())
  const receiver = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(() => receiver.close())
  // Another database is another deployment: on this Redis it needs a prefix of its own (test/faults/shared-redis.test.ts).
  const dev = startCli(t, ['dev'], { cwd: tempDir(t), env: { REDIS_URL: redis.url, ANVIL_DATABASE_URL: other.url, ANVIL_PREFIX: '{dev}', PORT: '0' } })
  const reach = 'anvil dev: outgoing webhooks may reach loopback, for receivers on this machine (ANVIL_OUTBOUND_ALLOW_NETS sets otherwise)'
  t.match(await dev.log(reach), { allowNets: '127.0.0.0/8,::1/128' })
  // The page says so up front, before its first example: the line a reader will see, and the variable for `anvil worker`.
  const page = readFileSync(join(ROOT, 'docs/outgoing-webhooks.md'), 'utf8')
  const intro = page.slice(0, page.indexOf('```'))
  const quoted = /`(anvil dev: outgoing webhooks[^`]*)`/.exec(intro)?.[1]
  t.ok(quoted !== undefined && reach.startsWith(quoted), `the intro quotes the line anvil dev logs (${String(quoted)})`)
  t.match(intro, /`127\.0\.0\.0\/8,::1\/128`/, 'and the networks it allows')
  t.match(intro, /`ANVIL_OUTBOUND_ALLOW_NETS=127\.0\.0\.0\/8`/, 'and the variable anvil worker needs for a local receiver')
  await dev.log('anvil worker: dispatching and delivering outgoing webhooks')
  const devOutbound = createOutbound({ database: other.url, redis: redis.url })
  t.teardown(async () => await devOutbound.close())
  await devOutbound.endpoints.create({ url: `${receiver.url}/dev` })
  const { messageId } = await devOutbound.publish({ type: 'dev.ping', data: {} })
  await receiver.waitFor(1)
  t.equal(receiver.received[0]?.headers['webhook-id'], messageId)
  await eventually('the attempt to be answered', async () => (await other.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status <> 'started'", [messageId])).length > 0)
  t.match(await other.query('SELECT status, attempt FROM anvil.deliveries WHERE message_id = $1', [messageId]), [{ status: 'success', attempt: 1 }], 'the first attempt, not an ssrf refusal and a retry')
  t.equal(await dev.stop(), 0)
})

// No handler, no forwarding source and no database: one line saying what it needs, in test/cli/config.test.ts.

// The roles' tests come last: the workers above dispatch whatever is pending, and the inbound role's message must stay so.
/** The same command line for every role, as deployments that differ only by ANVIL_WORKER_ROLE would have. */
const WORKER = ['worker', '--handler', 'examples/handler.js']

async function outboxStatus (id: string): Promise<string | undefined> {
  return (await db.query<{ status: string }>('SELECT status FROM anvil.outbox WHERE id = $1', [id]))[0]?.status
}

t.test('--role outbound delivers outgoing webhooks and leaves the inbound job waiting', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(() => receiver.close())
  await outbound.endpoints.create({ url: `${receiver.url}/out`, tenant: 'role-out' })
  const jobId = await enqueue(redis.url, 'role-out', 'evt_role_out')
  const { messageId } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'role-out' })
  const worker = startCli(t, [...WORKER, '--role', 'outbound'], { cwd: ROOT, env: { ...env, ANVIL_QUEUE: 'role-out' } })
  t.match(await worker.log('anvil worker: started'), { role: 'outbound', outgoing: true })
  await receiver.waitFor(1)
  t.equal(receiver.received[0]?.headers['webhook-id'], messageId, 'the outgoing side runs')
  t.equal(await worker.stop(), 0)
  t.equal(await inspect(t, redis.url, 'role-out').getJobState(jobId), 'waiting', 'the inbound job was never taken')
  t.notOk(worker.lines.some((line) => parseJson(line)?.handled !== undefined), 'the handler never ran')
})

t.test('ANVIL_WORKER_ROLE=inbound runs the handler and never dispatches the outbox', async (t) => {
  const { messageId } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'role-in' })
  const jobId = await enqueue(redis.url, 'role-in', 'evt_role_in')
  const worker = startCli(t, WORKER, { cwd: ROOT, env: { ...env, ANVIL_QUEUE: 'role-in', ANVIL_WORKER_ROLE: 'inbound' } })
  t.match(await worker.log('anvil worker: started'), { role: 'inbound' })
  await worker.line((line) => parseJson(line)?.handled === jobId)
  const queue = inspect(t, redis.url, 'role-in')
  await eventually('queue.getJobState(jobId) === \'completed\'', async () => await queue.getJobState(jobId) === 'completed' ? true : undefined)
  t.equal(await worker.stop(), 0)
  t.equal(await outboxStatus(messageId), 'pending', 'published before the worker started, still not dispatched')
  t.notMatch(worker.output, /dispatching and delivering/)
})

t.test('a role without what it needs is one line', async (t) => {
  const inbound = await runCli(['worker', '--role', 'inbound'], { env })
  t.equal(inbound.code, 1)
  t.match(inbound.stderr, /^anvil: invalid configuration: anvil worker --role inbound needs --handler or a sources file \(ANVIL_CONFIG\) whose sources forward$/m)
  const outgoing = await runCli(['worker', '--handler', 'examples/handler.js'], { cwd: ROOT, env: { REDIS_URL: redis.url, ANVIL_WORKER_ROLE: 'outbound' } })
  t.equal(outgoing.code, 1)
  t.match(outgoing.stderr, /ANVIL_WORKER_ROLE outbound needs ANVIL_DATABASE_URL/)
  const bad = await runCli(['worker', '--role', 'everything'], { env })
  t.match(bad.stderr, /--role must be all, inbound or outbound \(got "everything"\)/)
})
