/**
 * Delivery workers SIGKILLed mid-delivery: `anvil worker --role outbound` once, then delivery worker processes
 * (test/fixtures/delivery-worker-process.mjs, for a short retry schedule) killed again and again while a few
 * hundred messages go to a real receiver that counts its POSTs per webhook-id. Delivery is at-least-once;
 * every POST the receiver answered has a row in the delivery log, duplicates included; nothing ends unlogged.
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Queue } from 'bullmq'
import { startCli } from './helpers/cli.js'
import { waitFor } from './helpers/chain.js'
import { outboundFixture } from './helpers/outbound.js'
import { startScript, type Script } from './fixtures/script.js'

const fixture = await outboundFixture()
const { db, redis } = fixture

/** A receiver that counts the POSTs it answers per webhook-id; `hold` keeps an answer back (never sent while it is true). */
async function countingReceiver (answerAfterMs: () => number) {
  const answered = new Map<string, number>()
  let arrived = 0
  let hold = false
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      arrived++
      if (hold) return
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
    arrived: () => arrived,
    set hold (value: boolean) { hold = value }
  }
}

interface Row { message_id: string, attempt: number, status: string, error_class: string | null }
const rowsOf = async (messageIds: string[]): Promise<Row[]> =>
  await db.query<Row>('SELECT message_id, attempt, status, error_class FROM anvil.deliveries WHERE message_id = ANY($1) ORDER BY id', [messageIds])

t.test('anvil worker --role outbound honours ANVIL_LOCK_DURATION_MS: a SIGKILL mid-POST is a logged failed attempt, retried on the schedule', async (t) => {
  const receiver = await countingReceiver(() => 0)
  receiver.hold = true
  const outbound = fixture.open()
  const endpoint = await outbound.endpoints.create({ url: receiver.url, tenant: 'cli-kill' })
  const env = {
    REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_WORKER_ROLE: 'outbound', ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8',
    ANVIL_LOCK_DURATION_MS: '1000', ANVIL_STALLED_INTERVAL_MS: '500', HOST: '127.0.0.1', PORT: '0'
  }
  const first = startCli(t, ['worker'], { env })
  await first.log('anvil worker: dispatching and delivering outgoing webhooks')
  const { messageId } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'cli-kill' })
  await waitFor('the first POST', () => receiver.arrived() === 1, 30_000)
  t.same((await rowsOf([messageId])).map((row) => row.status), ['started'], 'the attempt is in the log before its answer')
  process.kill(first.child.pid as number, 'SIGKILL')
  await first.exited
  receiver.hold = false
  const second = startCli(t, ['worker'], { env })
  const job = `${messageId}.${endpoint.id}`
  await waitFor('the job to complete on the second worker', async () => await outbound.queue.getJobState(job) === 'completed', 40_000)
  t.equal(receiver.answered.get(messageId), 1, 'the retry was answered')
  t.match(await rowsOf([messageId]), [
    { attempt: 1, status: 'failed', error_class: 'stalled' },
    { attempt: 2, status: 'success' }
  ], 'the killed attempt is a failed attempt in the log, then the retry succeeds')
  t.equal(await second.stop(), 0)
})

t.test('delivery workers SIGKILLed at random points: every message delivered, every POST answered has a row, nothing ends unlogged', async (t) => {
  const MESSAGES = 300
  const KILLS = 6
  const queueName = 'faults-delivery'
  const schedule = [200, 400, 800, 1000, 1000, 1000, 1000, 1000]
  const receiver = await countingReceiver(() => 50 + Math.floor(Math.random() * 200))
  const outbound = fixture.open({ queueName, retrySchedule: schedule, dispatch: { pollIntervalMs: 100 } })
  const endpoint = await outbound.endpoints.create({ url: receiver.url, tenant: 'kills' })
  const env = {
    REDIS_URL: redis.url, DATABASE_URL: db.url, ANVIL_QUEUE: queueName, RETRY_SCHEDULE: JSON.stringify(schedule),
    WORKER_CONCURRENCY: '8', LOCK_DURATION_MS: '1000', STALLED_INTERVAL_MS: '500'
  }
  const start = async (): Promise<Script> => {
    const script = startScript(t, 'delivery-worker-process.mjs', env)
    await script.log('fixture delivery worker: started')
    return script
  }
  const workers = await Promise.all([start(), start()])
  await outbound.dispatcher.start()
  const messageIds: string[] = []
  // A batch before each kill, so every kill lands while deliveries are in flight, at a random point of one.
  for (let kill = 0; kill < KILLS; kill++) {
    for (let i = 0; i < MESSAGES / KILLS; i++) messageIds.push((await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'kills' })).messageId)
    const before = receiver.arrived()
    await waitFor('POSTs of the batch', () => receiver.arrived() > before, 30_000)
    await sleep(Math.floor(Math.random() * 400))
    const victim = Math.floor(Math.random() * workers.length)
    process.kill((workers[victim] as Script).pid, 'SIGKILL')
    await (workers[victim] as Script).exited
    workers[victim] = await start()
  }

  const jobs = new Queue(queueName, { connection: { url: redis.url } , prefix: '{anvil}' })
  t.teardown(() => jobs.close())
  const jobIds = messageIds.map((id) => `${id}.${endpoint.id}`)
  await waitFor('every job to end', async () => {
    const states = await Promise.all(jobIds.map(async (id) => await jobs.getJobState(id)))
    return states.every((state) => state === 'completed' || state === 'failed')
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

  const failed = jobIds.filter((_, i) => !(rowsPer.get(messageIds[i] as string) ?? []).some((row) => row.status === 'success'))
  const view = new Set<string>()
  for (let cursor: string | undefined, page; (page = await outbound.deliveries.undelivered({ endpoint: endpoint.id, limit: 200, cursor })); cursor = page.next) {
    for (const item of page.items) view.add(item.messageId)
    if (page.next === null) break
  }
  for (const jobId of failed) t.ok(view.has(jobId.slice(0, jobId.indexOf('.'))), `${jobId}: no success, so listed as undelivered`)
  for (const jobId of jobIds) {
    if (await jobs.getJobState(jobId) !== 'failed') continue
    t.ok((rowsPer.get(jobId.slice(0, jobId.indexOf('.'))) ?? []).length > 0, `${jobId} failed with its attempts logged`)
  }
  await Promise.all(workers.map(async (worker) => await worker.kill('SIGTERM')))
})
