/** `anvil worker` with ANVIL_DATABASE_URL and no handler: it dispatches the outbox and delivers outgoing webhooks. */
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { migrate } from '../src/db/migrate.js'
import { createOutbound } from '../src/outbound/outbound.js'
import { runCli, startCli } from './helpers/cli.js'
import { TestDatabase } from './helpers/pg.js'
import { TestRedis } from './helpers/redis.js'
import { startReceiver } from './helpers/receiver.js'

const [db, redis] = await Promise.all([TestDatabase.create(), TestRedis.start()])
t.teardown(async () => await Promise.all([db.drop(), redis.stop()]))
await migrate(db.url)

t.test('no handler, a database: outgoing only, from publish to a signed delivery logged in PostgreSQL', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(() => receiver.close())
  const outbound = createOutbound({ database: db.url, redis: redis.url })
  t.teardown(async () => await outbound.close())
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/hooks` })
  const worker = startCli(t, ['worker'], { env: { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', HOST: '127.0.0.1', PORT: '0' } })
  const { port } = await worker.log('anvil worker: health and metrics listening')
  await worker.log('anvil worker: dispatching and delivering outgoing webhooks')
  const { messageId } = await outbound.publish({ type: 'order.paid', data: { total: 5 } })
  await receiver.waitFor(1)
  const [request] = receiver.received
  t.match(new Webhook(endpoint.secret).verify(request?.body ?? '', request?.headers as Record<string, string>), { id: messageId, type: 'order.paid', data: { total: 5 } })
  for (let i = 0; i < 200 && (await db.query('SELECT 1 FROM anvil.deliveries WHERE message_id = $1', [messageId])).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25))
  t.match(await db.query('SELECT status, http_status FROM anvil.deliveries WHERE message_id = $1', [messageId]), [{ status: 'success', http_status: 204 }])
  const metrics = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text()
  t.match(metrics, /^anvil_outbox_pending \d+/m, 'the outbox gauges')
  t.match(metrics, /^anvil_outbound_deliveries_total\{.*outcome="success".*\} 1/m, 'the delivery counted')
  t.equal((await fetch(`http://127.0.0.1:${String(port)}/health/ready`)).status, 200)
  t.equal(await worker.stop(), 0)
  t.notMatch(worker.output, /whsec_/, 'no secret in the log')
})

t.test('anvil dev with a database migrates it and sends outgoing webhooks too', async (t) => {
  const other = await TestDatabase.create()
  t.teardown(async () => await other.drop())
  const receiver = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(() => receiver.close())
  const dev = startCli(t, ['dev'], { env: { REDIS_URL: redis.url, ANVIL_DATABASE_URL: other.url, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', PORT: '0' } })
  await dev.log('anvil worker: dispatching and delivering outgoing webhooks')
  const outbound = createOutbound({ database: other.url, redis: redis.url })
  t.teardown(async () => await outbound.close())
  await outbound.endpoints.create({ url: `${receiver.url}/dev` })
  const { messageId } = await outbound.publish({ type: 'dev.ping', data: {} })
  await receiver.waitFor(1)
  t.equal(receiver.received[0]?.headers['webhook-id'], messageId)
  t.equal(await dev.stop(), 0)
})

t.test('no handler, no forwarding source and no database: one line saying what it needs', async (t) => {
  const result = await runCli(['worker'], { env: { REDIS_URL: redis.url } })
  t.equal(result.code, 1)
  t.match(result.stderr, /anvil worker needs --handler, a sources file \(ANVIL_CONFIG\) whose sources forward, or ANVIL_DATABASE_URL/)
})
