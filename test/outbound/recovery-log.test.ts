/**
 * A recovery shows in the log: the delivery worker logs each failed attempt, and, once per run of failures of
 * an endpoint, the success that ends it (`anvil delivery: endpoint recovered`), whichever worker delivers it.
 * Real PostgreSQL, Redis and HTTP.
 */
import t from 'tap'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import type { AnvilLogger } from '../../src/shared/logger.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
// Growing, so no message runs out of attempts (9) before the test sees the failures and heals the receiver: with
// 4 × 50 ms a loaded machine spent all 5 attempts in that gap, and the successes the test waits for never came.
const SCHEDULE = [50, 100, 200, 400, 800, 1600, 3200, 6400]
let failing = true
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  res.statusCode = req.url === '/flaky' && failing ? 503 : 204
  res.end()
}), async (receiver) => await receiver.close())

const lines: Array<{ msg: string, fields: Record<string, unknown> }> = []
const note = (fields: object, msg?: string): void => { lines.push({ msg: msg ?? '', fields: fields as Record<string, unknown> }) }
const logger: AnvilLogger = { info: note, warn: note, error: note }
const recoveries = (): Array<Record<string, unknown>> => lines.filter((l) => l.msg === 'anvil delivery: endpoint recovered').map((l) => l.fields)

const outbound = beforeAll(t, async () => fixture.open({ queueName: 'recovery', retrySchedule: SCHEDULE, dispatch: { pollIntervalMs: 100 } }))
beforeStep(t, async () => {
  for (let i = 0; i < 2; i++) {
    const worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, queueName: 'recovery', allowNets: '127.0.0.0/8', jitter: 0, circuit: false, logger })
    t.teardown(async () => await worker.close())
    await worker.start()
  }
  await outbound.dispatcher.start()
})

const count = async (endpointId: string, status: string): Promise<number> =>
  (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM anvil.deliveries WHERE endpoint_id = $1 AND status = $2', [endpointId, status]))[0]?.n ?? 0

t.test('an endpoint that failed and then takes deliveries again: one recovery line per run of failures, none for a healthy one', async (t) => {
  const flaky = await outbound.endpoints.create({ url: `${receiver.url}/flaky`, tenant: 'flaky' })
  const healthy = await outbound.endpoints.create({ url: `${receiver.url}/healthy`, tenant: 'healthy' })
  for (let i = 0; i < 6; i++) await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'flaky' })
  for (let i = 0; i < 3; i++) await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'healthy' })
  await eventually('count(flaky.id, \'failed\') >= 6 && count(healthy.id, \'success\') === 3', async () => await count(flaky.id, 'failed') >= 6 && await count(healthy.id, 'success') === 3, 30_000)
  t.same(recoveries(), [], 'no recovery while it fails')
  failing = false
  await eventually('count(flaky.id, \'success\') === 6', async () => await count(flaky.id, 'success') === 6, 30_000)
  t.match(recoveries(), [{ endpointId: flaky.id, failingSince: String, failedForMs: Number }], 'one line for six successes after the failures, over two workers')

  failing = true
  // The first run left several failed attempts per message: wait for one more, the new message's.
  const failedBefore = await count(flaky.id, 'failed')
  await outbound.publish({ type: 'order.paid', data: { again: true }, tenant: 'flaky' })
  await eventually('count(flaky.id, \'failed\') > failedBefore', async () => await count(flaky.id, 'failed') > failedBefore, 30_000)
  failing = false
  await eventually('count(flaky.id, \'success\') === 7', async () => await count(flaky.id, 'success') === 7, 30_000)
  t.equal(recoveries().length, 2, 'a second run of failures, a second recovery')
  t.notOk(recoveries().some((fields) => fields.endpointId === healthy.id), 'never for an endpoint that did not fail')
  t.ok(lines.some((l) => l.msg === 'anvil delivery: attempt failed' && l.fields.endpointId === flaky.id), 'the failures were logged too')
})

t.test('recordAttempt: of 20 successes at once after a failure, exactly one carries the recovery', async (t) => {
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/race`, tenant: 'race' })
  const attempt = (n: number, success: boolean) => ({ messageId: `race-${n}`, endpointId: endpoint.id, attempt: 1, durationMs: 1, responseHead: '', payloadSha256: 'x', success })
  const failed = await outboundInternals(outbound).store.recordAttempt(attempt(0, false))
  t.type(failed.failingSince, Date)
  t.notOk('recoveredFrom' in failed, 'a failure recovers nothing')
  const results = await Promise.all(Array.from({ length: 20 }, async (_, i) => await outboundInternals(outbound).store.recordAttempt(attempt(i + 1, true))))
  const recovered = results.filter((r) => r.recoveredFrom !== undefined)
  t.equal(recovered.length, 1)
  t.same(recovered[0]?.recoveredFrom, failed.failingSince, 'when the run of failures began')
})
