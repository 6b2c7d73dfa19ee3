/**
 * `anvil messages resend` against a real `anvil worker` (ANVIL_OUTBOUND_RETRY_SCHEDULE=none: one delivery
 * attempt, so a receiver answering 500 fails a message for good) and `anvil serve`'s admin API: by id straight
 * to PostgreSQL and Redis, by filter through the admin API, each after a dry run that sends nothing.
 */
import t from 'tap'
import { createOutbound, outboundInternals } from '../../src/outbox/outbound.js'

import { runCli, runCliOnStoppedRedis, startCli } from '../helpers/cli.js'
import { refusal } from '../helpers/program.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-for-cli-messages'
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
let failing = true
const receiver = beforeAll(t, async () => await startReceiver((_req, res) => { res.statusCode = failing ? 500 : 204; res.end() }), async (receiver) => await receiver.close())
const outbound = beforeAll(t, async () => createOutbound({ database: db.url, redis: redis.url }), async (outbound) => await outbound.close())
// Its fan-outs fail with Redis up (BullMQ refuses the job option): its messages end `failed` at dispatch.
const failingDispatch = beforeAll(t, async () => createOutbound({ database: db.url, redis: redis.url, deliveryJobOptions: { priority: 1e9 }, dispatch: { attempts: 1 } }),
  async (outbound) => await outbound.close())

// Made before the worker starts, whose dispatcher would take them first.
const endpoint = beforeAll(t, async () => await outbound.endpoints.create({ url: `${receiver.url}/hook` }))
const ids: string[] = []
beforeStep(t, async () => {
  for (let i = 0; i < 3; i++) {
    ids.push((await failingDispatch.publish({ type: 'order.shipped', data: { i } })).messageId)
    await failingDispatch.dispatcher.dispatchOnce()
  }
})

const env = beforeAll(t, async () => ({ REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_OUTBOUND_RETRY_SCHEDULE: 'none' }))
beforeStep(t, async () => {
  const worker = startCli(t, ['worker'], { env: { ...env, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', HOST: '127.0.0.1', PORT: '0' } })
  await worker.log('anvil worker: dispatching and delivering outgoing webhooks')
})
const successes = async (id: string): Promise<number> =>
  (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status = 'success'", [id])).length
const lines = (stdout: string): unknown[] => stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line))

t.test('by id, straight to the database: a message whose one delivery attempt failed, after a dry run', async (t) => {
  const { messageId } = await outbound.publish({ type: 'order.paid', data: { n: 1 } })
  await eventually('(db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND s…', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status = 'failed'", [messageId])).length === 1)
  await eventually('outboundInternals(outbound).queue.getJobState(`${messageId}.${endpoin…', async () => await outboundInternals(outbound).queue.getJobState(`${messageId}.${endpoint.id}`) === 'failed')
  const dry = await runCli(['messages', 'resend', messageId, '--dry-run'], { env })
  t.equal(dry.code, 0, dry.stderr)
  t.same(lines(dry.stdout), [{ messageId, status: 'dispatched', endpointIds: [endpoint.id], inFlight: [], delivered: [] }])
  t.equal(dry.stderr, 'would re-send 1 message, 1 delivery in all\n')
  failing = false
  const got = receiver.received.length
  const real = await runCli(['messages', 'resend', messageId], { env })
  t.equal(real.code, 0, real.stderr)
  t.equal(real.stderr, 're-sent 1 message, 1 delivery in all\n')
  await eventually('successes(messageId) === 1', async () => await successes(messageId) === 1)
  t.same(receiver.received.slice(got).map((r) => r.headers['webhook-id']), [messageId], 'delivered once, same webhook-id')
  failing = true
})

t.test('by filter, through the admin API: messages whose dispatch failed, a dry run then the re-send', async (t) => {
  const serve = startCli(t, ['serve'], { env: { ...env, WEBHOOK_SECRET: 'whsec_cli_messages_0123456789', ANVIL_ADMIN_TOKEN: TOKEN, HOST: '127.0.0.1', PORT: '0' } })
  const port = await serve.listeningPort('anvil serve: listening')
  const api = { ...env, ANVIL_ADMIN_TOKEN: TOKEN }
  const url = `http://127.0.0.1:${port}/admin`
  const dry = await runCli(['messages', 'resend', '--url', url, '--filter', 'failure=dispatch', '--filter', 'type=order.shipped', '--dry-run'], { env: api })
  t.equal(dry.code, 0, dry.stderr)
  t.same(lines(dry.stdout), ids.map((messageId) => ({ messageId, status: 'failed', endpointIds: [endpoint.id], inFlight: [], delivered: [] })))
  t.equal(dry.stderr, 'would re-send 3 messages, 3 deliveries in all\n')
  t.same(await db.query("SELECT DISTINCT status FROM anvil.outbox WHERE type = 'order.shipped'"), [{ status: 'failed' }], 'the dry run sent nothing')
  failing = false
  const real = await runCli(['messages', 'resend', '--url', url, '--filter', 'failure=dispatch', '--limit', '2'], { env: api })
  t.equal(real.code, 0, real.stderr)
  t.same(lines(real.stdout).map((item) => (item as { messageId: string }).messageId), ids.slice(0, 2), '--limit: at most that many')
  const rest = await runCli(['messages', 'resend', '--url', url, '--all'], { env: api })
  t.same(lines(rest.stdout).map((item) => (item as { messageId: string }).messageId), ids.slice(2), 'then the rest')
  for (const id of ids) await eventually('successes(id) === 1', async () => await successes(id) === 1)
  t.same(receiver.received.filter((r) => ids.includes(String(r.headers['webhook-id']))).length, 3, 'each delivered once')

  const bad = await runCli(['messages', 'resend', '--url', url, '--filter', 'status=failed'], { env: api })
  t.equal(bad.code, 1)
  t.equal(bad.stderr, 'anvil: invalid filter: --filter takes key=value with a key of failure, type, tenant, since, until (got "status=failed")\n')
  // Refused before connecting anywhere: in this process, through the CLI's program (test/helpers/program.ts).
  const none = await refusal(['messages', 'resend', '--all'], { REDIS_URL: redis.url })
  t.match(none, { code: 1, stderr: /^anvil: invalid configuration: ANVIL_DATABASE_URL \(or --url with ANVIL_ADMIN_TOKEN\) is required/ })
  t.equal(await serve.stop(), 0)
})

t.test('a dry run waits for a Redis too busy to answer (stopped), as the worker does, instead of "queue unavailable"', async (t) => {
  failing = true
  const { messageId } = await outbound.publish({ type: 'order.paid', data: { n: 2 } })
  await eventually('outboundInternals(outbound).queue.getJobState(`${messageId}.${endpoin…', async () => await outboundInternals(outbound).queue.getJobState(`${messageId}.${endpoint.id}`) === 'failed')
  // Redis takes the connection but answers nothing until the CLI's handshake waits on it.
  const dry = await runCliOnStoppedRedis(redis, ['messages', 'resend', messageId, '--dry-run'], { env })
  t.equal(dry.code, 0, dry.stderr)
  t.same(lines(dry.stdout), [{ messageId, status: 'dispatched', endpointIds: [endpoint.id], inFlight: [], delivered: [] }])
  t.match(dry.stderr, /would re-send 1 message, 1 delivery in all\n$/)
})
