/**
 * `anvil worker` with ANVIL_DATABASE_URL and a handler that gives up: the dead letter becomes an
 * `inbound.dead_lettered` operational event, which the same worker dispatches and delivers to the operational
 * endpoint, signed with its secret, linking into the console at ANVIL_CONSOLE_URL. A real worker process,
 * PostgreSQL, Redis and HTTP.
 */
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { migrate } from '../../src/db/migrate.js'
import { createOutbound } from '../../src/outbox/outbound.js'
import { enqueue, runCli, startCli, tempDir } from '../helpers/cli.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeStep } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'

let db: TestDatabase
let redis: TestRedis
beforeStep(t, async () => {
  [db, redis] = await Promise.all([TestDatabase.create(), TestRedis.start()])
  t.teardown(async () => await Promise.all([db.drop(), redis.stop()]))
  await migrate(db.url)
})
const CONSOLE = 'https://console.example/admin/console/'

t.test('an inbound event whose handler gives up reaches the operational endpoint as inbound.dead_lettered', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(() => receiver.close())
  const outbound = createOutbound({ database: db.url, redis: redis.url })
  t.teardown(async () => await outbound.close())
  const ops = await outbound.operationalEndpoints.create({ url: `${receiver.url}/ops`, eventTypes: ['inbound.dead_lettered'] })
  const dir = tempDir(t)
  // Named so BullMQ takes it for its UnrecoverableError: no retry, dead-lettered at once.
  writeFileSync(join(dir, 'refuse.cjs'), "exports.handler = async () => { const err = new Error('refused by the handler'); err.name = 'UnrecoverableError'; throw err }\n")
  const worker = startCli(t, ['worker', '--handler', './refuse.cjs'], {
    cwd: dir,
    env: { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', ANVIL_CONSOLE_URL: CONSOLE, HOST: '127.0.0.1', PORT: '0' }
  })
  await worker.log('anvil worker: started')
  const jobId = await enqueue(redis.url, 'webhooks', 'evt_cli_dead')
  await worker.log('anvil worker: dead-lettered')
  await receiver.waitFor(1)
  const [request] = receiver.received
  const event = new Webhook(ops.secret).verify(request?.body ?? '', request?.headers as Record<string, string>)
  t.match(event, {
    type: 'inbound.dead_lettered',
    data: {
      eventId: 'evt_cli_dead', deadLetterId: `d_${jobId}`, jobId, reason: 'unrecoverable', attempts: 1, lastError: 'refused by the handler',
      tenant: null, link: `${CONSOLE}#/events/evt_cli_dead`
    }
  })
  t.equal(await worker.stop(), 0)
  t.notMatch(worker.output, /whsec_/, 'no secret in the log')
  t.equal(receiver.received.length, 1, 'one event')
})

t.test('a bad ANVIL_CONSOLE_URL: exit 1 with one line', async (t) => {
  const bad = await runCli(['worker'], { env: { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_CONSOLE_URL: 'console.example' } })
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^anvil: invalid configuration: ANVIL_CONSOLE_URL must be an http:\/\/ or https:\/\/ URL without a fragment \(got "console\.example"\)$/m)
})
