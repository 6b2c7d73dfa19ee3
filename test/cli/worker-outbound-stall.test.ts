/**
 * `anvil worker --role outbound` SIGKILLed mid-POST, twice: with ANVIL_LOCK_DURATION_MS and ANVIL_STALLED_INTERVAL_MS
 * another worker takes the delivery back soon, each killed attempt is a failed attempt in the delivery log, and
 * the retry follows the schedule (ANVIL_OUTBOUND_RETRY_SCHEDULE). The many-kills run is test/faults/delivery-worker.test.ts.
 */
import t from 'tap'
import { createOutbound, outboundInternals } from '../../src/outbox/outbound.js'
import { startCli } from '../helpers/cli.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())

t.test('--role outbound takes ANVIL_LOCK_DURATION_MS: workers SIGKILLed mid-POST twice are two logged failed attempts, retried on the schedule by another', async (t) => {
  let holding = true
  // The first POST is never answered: its worker dies waiting.
  const receiver = await startReceiver((_req, res) => { if (!holding) res.end('ok') })
  t.teardown(() => receiver.close())
  const outbound = createOutbound({ database: db.url, redis: redis.url })
  t.teardown(async () => await outbound.close())
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/killed`, tenant: 'cli-kill' })
  const env = {
    REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_WORKER_ROLE: 'outbound', ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8',
    ANVIL_LOCK_DURATION_MS: '1000', ANVIL_STALLED_INTERVAL_MS: '500', ANVIL_OUTBOUND_RETRY_SCHEDULE: '200,200,200', HOST: '127.0.0.1', PORT: '0'
  }
  const first = startCli(t, ['worker'], { env })
  await first.log('anvil worker: dispatching and delivering outgoing webhooks')
  t.notMatch(first.output, 'no --handler', '--role outbound says it wants no handler: no warning')
  const { messageId } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'cli-kill' })
  await eventually('receiver.received.length >= 1', () => receiver.received.length >= 1 ? true : undefined)
  const logged = async (): Promise<Array<{ attempt: number, status: string, error_class: string | null }>> =>
    await db.query('SELECT attempt, status, error_class FROM anvil.deliveries WHERE message_id = $1 ORDER BY id', [messageId])
  t.match(await logged(), [{ attempt: 1, status: 'started' }], 'the attempt is in the log before its answer')
  process.kill(first.child.pid as number, 'SIGKILL')
  await first.exited
  const second = startCli(t, ['worker'], { env })
  // BullMQ's 30 s lock would outlast this wait: the second worker takes the job back after the 1 s one.
  await eventually('receiver.received.length >= 2', () => receiver.received.length >= 2 ? true : undefined)
  t.match(await logged(), [{ attempt: 1, status: 'failed', error_class: 'stalled' }, { attempt: 2, status: 'started' }], 'the first stall, then the retry in flight')
  // A second stall of the same job: BullMQ's default (one stall allowed) would fail it for good, unlogged.
  process.kill(second.child.pid as number, 'SIGKILL')
  await second.exited
  holding = false
  const third = startCli(t, ['worker'], { env })
  await eventually('receiver.received.length >= 3', () => receiver.received.length >= 3 ? true : undefined)
  await eventually('outboundInternals(outbound).queue.getJobState(`${messageId}.${endpoin…', async () => await outboundInternals(outbound).queue.getJobState(`${messageId}.${endpoint.id}`) === 'completed' ? true : undefined)
  t.match(await logged(), [{ attempt: 1, status: 'failed', error_class: 'stalled' }, { attempt: 2, status: 'failed', error_class: 'stalled' }, { attempt: 3, status: 'success' }],
    'each killed attempt is a failed attempt, then the retry on the schedule succeeds')
  t.equal(receiver.received.length, 3, 'one POST per attempt')
  t.equal(await third.stop(), 0)
})
