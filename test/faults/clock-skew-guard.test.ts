/**
 * A worker whose clock runs 10 min ahead of Redis's takes no jobs and is not ready until its clock agrees again
 * (issue 33, item 10). The clock is the process's own, moved by test/fixtures/clock-offset.mjs (Redis and this
 * test keep the real time). Before, such a worker promoted every worker's delayed retries at once: a schedule of
 * 1, 2 and 4 min fired 0.7 s and 0.25 s apart. Real processes: `anvil worker --role outbound` and its database.
 */
import t from 'tap'
import { writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deliveryJobOptions } from '../../src/delivery/delivery-schedule.js'
import { outboundJobId } from '../../src/delivery/delivery-job.js'
import { ROOT, startCli } from '../helpers/cli.js'

import { outboundFixture } from '../helpers/outbound.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const receiver = beforeAll(t, async () => await startReceiver((_req, res) => { res.statusCode = 204; res.end() }), async (receiver) => await receiver.close())
const OFF = 'anvil delivery: this host\'s clock is off from Redis\'s by more than maxClockSkewMs; taking no jobs (not ready) until it agrees again'
const BACK = 'anvil delivery: this host\'s clock agrees with Redis\'s again; taking jobs'

t.test('a delivery worker 10 min ahead takes no job, not even a delayed one due in a minute, and is not ready until its clock is back', async (t) => {
  const outbound = fixture.open()
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/hook` })
  // A retry due in a minute, scheduled on the real clock: a worker 10 min ahead would take it at once.
  const { messageId: later } = await outbound.publish({ type: 'order.paid', data: { later: true } })
  await db.query("UPDATE anvil.outbox SET status = 'dispatched' WHERE id = $1", [later])
  const delayed = await outboundInternals(outbound).queue.add('deliver', {
    messageId: later, endpointId: endpoint.id, eventType: 'order.paid', url: `${receiver.url}/hook`, body: '{}', scheme: 'standard-webhooks'
  }, { ...deliveryJobOptions([60_000]), jobId: outboundJobId(later, endpoint.id), delay: 60_000 })
  // And a message the worker's own dispatcher fans out.
  const { messageId: now } = await outbound.publish({ type: 'order.paid', data: { now: true } })

  const offsetFile = join(mkdtempSync(join(tmpdir(), 'anvil-clock-')), 'offset')
  writeFileSync(offsetFile, String(10 * 60_000))
  const worker = startCli(t, ['worker', '--role', 'outbound'], {
    env: {
      REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8', HOST: '127.0.0.1', PORT: '0',
      NODE_OPTIONS: `--import ${join(ROOT, 'test', 'fixtures', 'clock-offset.mjs')}`, CLOCK_OFFSET_MS: String(10 * 60_000), CLOCK_OFFSET_FILE: offsetFile
    }
  })
  const { port } = await worker.log('anvil worker: health and metrics listening')
  const ready = async (): Promise<{ status: number, body: unknown }> => {
    const response = await fetch(`http://127.0.0.1:${String(port)}/health/ready`)
    return { status: response.status, body: await response.json() }
  }
  t.match(await worker.log(OFF), { level: 40, maxClockSkewMs: 5000 })
  const skew = Number((await worker.log(OFF)).skewSeconds)
  t.ok(Math.abs(skew - 600) < 5, `the skew measured against Redis's TIME: ${skew} s`)
  // The dispatcher (no clock of BullMQ's involved) goes on; the delivery worker takes nothing.
  await worker.log('anvil worker: dispatching and delivering outgoing webhooks')
  t.same(await ready(), { status: 503, body: { status: 'not ready', redis: 'up', worker: 'stopped' } }, 'not ready while its clock is off')
  t.equal(await delayed.getState(), 'delayed', 'the retry due in a minute was not promoted')
  // Fanned out and waiting for a worker: `prioritized` when the fair order between tenants gave it a priority.
  await eventually('the fresh message to be fanned out', async () =>
    ['waiting', 'prioritized'].includes(await outboundInternals(outbound).queue.getJobState(outboundJobId(now, endpoint.id))), 30_000)
  t.equal(receiver.received.length, 0, 'nothing was sent')

  // The host's clock is set right: the next check finds it, and the worker takes jobs again.
  writeFileSync(offsetFile, '0')
  worker.child.kill('SIGWINCH')
  await worker.log(BACK)
  await eventually('ready again', async () => (await ready()).status === 200, 30_000)
  await receiver.waitFor(1)
  t.same(receiver.received.map((one) => one.headers['webhook-id']), [now], 'the fresh message went out')
  t.equal(await delayed.getState(), 'delayed', 'the retry still waits for its minute')
  t.equal(worker.lines.filter((line) => line.includes(OFF)).length, 1, 'one line for the one check that found it off')
  t.equal(await worker.stop(), 0)
})
