/**
 * Delivery worker processes (test/fixtures/delivery-worker-process.mjs, with no jitter and no circuit; the CLI's
 * `anvil worker --role outbound` is killed once in test/cli/worker-outgoing.test.ts) SIGKILLed again and again
 * while 150 messages go to a real receiver that counts its POSTs per webhook-id. Delivery is at-least-once;
 * every POST the receiver answered has a row in the delivery log, duplicates included; nothing ends unlogged.
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Queue } from 'bullmq'

import { outboundFixture } from '../helpers/outbound.js'
import { deliveryWorkers } from '../fixtures/script.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture

/** A receiver that counts the POSTs it answers per webhook-id. */
async function countingReceiver (answerAfterMs: () => number) {
  const answered = new Map<string, number>()
  let arrived = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      arrived++
      setTimeout(() => {
        const id = String(req.headers['webhook-id'])
        answered.set(id, (answered.get(id) ?? 0) + 1)
        res.end('ok')
      }, answerAfterMs())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    answered,
    arrived: () => arrived
  }
}

interface Row { message_id: string, attempt: number, status: string, error_class: string | null }
const rowsOf = async (messageIds: string[]): Promise<Row[]> =>
  await db.query<Row>('SELECT message_id, attempt, status, error_class FROM anvil.deliveries WHERE message_id = ANY($1) ORDER BY id', [messageIds])

t.test('delivery workers SIGKILLed at random points: every message delivered, every POST answered has a row, nothing ends unlogged', async (t) => {
  const MESSAGES = 150
  const KILLS = 6
  const queueName = 'faults-delivery'
  const schedule = [200, 400, 800, 1000, 1000, 1000, 1000, 1000]
  const receiver = await countingReceiver(() => 50 + Math.floor(Math.random() * 200))
  const outbound = fixture.open({ queueName, retrySchedule: schedule, dispatch: { pollIntervalMs: 100 } })
  const endpoint = await outbound.endpoints.create({ url: receiver.url, tenant: 'kills' })
  const env = {
    REDIS_URL: redis.url, DATABASE_URL: db.url, ANVIL_QUEUE: queueName,
    WORKER_CONCURRENCY: '8', LOCK_DURATION_MS: '1000', STALLED_INTERVAL_MS: '500'
  }
  // Two processes; a killed one is replaced at once, and the next kill takes one that is up, so deliveries go on meanwhile.
  const workers = await deliveryWorkers(t, env)
  await outbound.dispatcher.start()
  const messageIds: string[] = []
  // A batch before each kill, so every kill lands while deliveries are in flight, at a random point of one.
  for (let kill = 0; kill < KILLS; kill++) {
    for (let i = 0; i < MESSAGES / KILLS; i++) messageIds.push((await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'kills' })).messageId)
    const before = receiver.arrived()
    await eventually('POSTs of the batch', () => receiver.arrived() > before, 30_000)
    await sleep(Math.floor(Math.random() * 400))
    await workers.killOne()
  }
  const jobs = new Queue(queueName, { connection: { url: redis.url }, prefix: '{anvil}' })
  t.teardown(() => jobs.close())
  await eventually('every job to end', async () => {
    const { completed = 0, failed = 0 } = await jobs.getJobCounts('completed', 'failed')
    return completed + failed === MESSAGES
  }, 40_000)
  const rows = await rowsOf(messageIds)
  const rowsPer = new Map<string, Row[]>()
  for (const row of rows) rowsPer.set(row.message_id, [...rowsPer.get(row.message_id) ?? [], row])
  const posts = [...receiver.answered.values()].reduce((a, b) => a + b, 0)
  t.comment(`${posts} POSTs answered for ${MESSAGES} messages over ${KILLS} kills; ${rows.length} rows, ${rows.filter((r) => r.error_class === 'stalled').length} stalled attempts`)
  t.ok(rows.some((row) => row.error_class === 'stalled'), 'the kills hit deliveries in flight')

  const undelivered = messageIds.filter((id) => receiver.answered.get(id) === undefined)
  t.same(undelivered, [], 'every message was delivered at least once')
  const unlogged = messageIds.filter((id) => (receiver.answered.get(id) ?? 0) > (rowsPer.get(id)?.length ?? 0))
  t.same(unlogged, [], 'every POST the receiver answered has its row, duplicates included')
  t.ok(posts <= rows.length, 'POSTs answered ≤ rows in the log')

  // Whatever did not end in a success is in the undelivered view, and a job that failed for good has its rows.
  const unsucceeded = messageIds.filter((id) => !(rowsPer.get(id) ?? []).some((row) => row.status === 'success'))
  const view = new Set<string>()
  for (let cursor: string | undefined; ;) {
    const page = await outbound.deliveries.undelivered({ endpoint: endpoint.id, limit: 200, cursor })
    for (const item of page.items) view.add(item.messageId)
    if (page.next === null) break
    cursor = page.next
  }
  t.same(unsucceeded.filter((id) => !view.has(id)), [], 'every message without a success is listed as undelivered')
  const failed = (await jobs.getJobs(['failed'])).map((job) => job.data.messageId as string)
  t.same(failed.filter((id) => (rowsPer.get(id) ?? []).length === 0), [], 'no job failed without a row')
  await workers.stopAll()
})
