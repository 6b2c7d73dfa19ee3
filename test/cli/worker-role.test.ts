/**
 * `anvil worker --role` (ANVIL_WORKER_ROLE): an outbound-only worker never takes an inbound job, an inbound-only
 * one never dispatches the outbox, with one command line for both (--handler is ignored by the outbound role).
 */
import t from 'tap'
import { createOutbound } from '../../src/outbox/outbound.js'
import { enqueue, inspect, parseJson, ROOT, runCli, startCli } from '../helpers/cli.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const outbound = beforeAll(t, async () => createOutbound({ database: db.url, redis: redis.url }), async (outbound) => await outbound.close())
const env = beforeAll(t, async () => ({ REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', HOST: '127.0.0.1', PORT: '0' }))
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
