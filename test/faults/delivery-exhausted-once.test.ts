/**
 * A stall after an attempt's outcome was logged is not an attempt of its own (issue 33, item 8). Two delivery
 * worker processes (test/fixtures/delivery-worker-process.mjs) with a pause of up to 400 ms after each COMMIT, so
 * kills land between an outcome's commit and BullMQ's move, are SIGKILLed 12 times, each within 0.4 s of a POST (so
 * while deliveries are in flight), while 100 messages go to a receiver answering 500, three attempts each. Before,
 * 14 of 200 pairs got two `message.exhausted` (`http_5xx@3` and `stalled@3`), the log gained "stopped before POST"
 * rows for attempts that had completed, and phantom stalls used up real attempts. Counted here: one
 * `message.exhausted` per pair, one row per attempt, and every POST the receiver answered within what the rows say.
 */
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Queue } from 'bullmq'

import { outboundFixture } from '../helpers/outbound.js'
import { deliveryWorkers } from '../fixtures/script.js'
import { STOPPED_BEFORE_POST, STOPPED_MID_POST } from '../../src/delivery-log/delivery-store.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture

const MESSAGES = 100
/**
 * Each kill waits for a POST since the last one, then lands within the 400 ms COMMIT pause: a kill on idle workers
 * (jobs waiting out a retry or a stall) hits nothing. The loop was 25 kills every 0.7–2 s, about half of them on idle
 * workers, and each kill costs a process start.
 */
const KILLS = 12
const SCHEDULE = [300, 600]
const ATTEMPTS = SCHEDULE.length + 1

interface Row { message_id: string, attempt: number, status: string, http_status: number | null, error_class: string | null, error: string | null }

t.test('delivery workers SIGKILLed after commits: one message.exhausted per pair, one row per attempt, no phantom stall', async (t) => {
  // POSTs whose body arrived, per webhook-id: all answered 500, the operational endpoint's 204.
  const posts = new Map<string, number>()
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url === '/ops') { res.statusCode = 204; return res.end() }
      const id = String(req.headers['webhook-id'])
      posts.set(id, (posts.get(id) ?? 0) + 1)
      res.statusCode = 500
      res.end('down')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const queueName = 'exhausted-once'
  const outbound = fixture.open({ queueName, retrySchedule: SCHEDULE, dispatch: { pollIntervalMs: 100 } })
  // An operational endpoint, so each message.exhausted is written to the outbox (where it is counted).
  await outbound.operationalEndpoints.create({ url: `${url}/ops`, eventTypes: ['message.exhausted'] })
  const hook = await outbound.endpoints.create({ url: `${url}/hook`, tenant: 'down' })
  const env = {
    REDIS_URL: redis.url, DATABASE_URL: db.url, ANVIL_QUEUE: queueName,
    WORKER_CONCURRENCY: '8', LOCK_DURATION_MS: '1500', STALLED_INTERVAL_MS: '500', COMMIT_PAUSE_MS: '400'
  }
  const posted = (): number => [...posts.values()].reduce((a, b) => a + b, 0)
  const workers = await deliveryWorkers(t, env)
  await outbound.dispatcher.start()
  const messageIds: string[] = []
  for (let i = 0; i < MESSAGES; i++) messageIds.push((await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'down' })).messageId)

  const jobs = new Queue(queueName, { connection: { url: redis.url }, prefix: '{anvil}' })
  t.teardown(async () => await jobs.close())
  // Ended: every job of the 100 pairs failed for good (the operational deliveries complete). By job id
  // (`<message>.<endpoint>`), not by loading every failed job each time.
  const failedPairs = async (): Promise<number> => (await jobs.getRanges(['failed'], 0, -1)).filter((id) => id.endsWith(`.${hook.id}`)).length
  const ended = async (): Promise<boolean> => await failedPairs() === MESSAGES
  let kills = 0
  while (kills < KILLS && !await ended()) {
    const before = posted()
    await eventually('a POST since the last kill, or the end', async () => posted() > before || await ended(), 60_000)
    if (posted() === before) break
    await sleep(Math.floor(Math.random() * 400))
    await workers.killOne()
    kills++
  }
  t.comment(`${kills} kills done; ${await failedPairs()} of ${MESSAGES} pairs failed for good so far`)
  await eventually('every pair to fail for good', ended, 60_000)
  // Each pair ends with one (its last attempt's row, or its stall's): wait for as many as there are pairs.
  await eventually('the operational events to be written', async () =>
    (await db.query("SELECT 1 FROM anvil.outbox WHERE type = 'message.exhausted'")).length >= MESSAGES, 30_000).catch(() => {})

  const rows = await db.query<Row>('SELECT message_id, attempt, status, http_status, error_class, error FROM anvil.deliveries WHERE message_id = ANY($1) ORDER BY id', [messageIds])
  const rowsOf = new Map<string, Row[]>()
  for (const row of rows) rowsOf.set(row.message_id, [...rowsOf.get(row.message_id) ?? [], row])
  const events = await db.query<{ message_id: string, error_class: string | null, attempts: number }>(
    "SELECT data::jsonb->>'messageId' AS message_id, data::jsonb->'lastAttempt'->>'errorClass' AS error_class, (data::jsonb->>'attempts')::int AS attempts FROM anvil.outbox WHERE type = 'message.exhausted'")
  const exhaustedOf = new Map<string, typeof events>()
  for (const event of events) exhaustedOf.set(event.message_id, [...exhaustedOf.get(event.message_id) ?? [], event])
  const stalled = rows.filter((row) => row.error_class === 'stalled')
  t.comment(`${kills} kills; ${rows.length} rows for ${MESSAGES} pairs, ${stalled.filter((row) => row.error === STOPPED_MID_POST).length} stalled mid-POST, ` +
    `${stalled.filter((row) => row.error === STOPPED_BEFORE_POST).length} before their POST; ${[...posts.values()].reduce((a, b) => a + b, 0)} POSTs`)
  t.ok(stalled.length > 0, 'the kills hit deliveries')

  const twice = messageIds.filter((id) => (exhaustedOf.get(id) ?? []).length !== 1)
  t.same(twice.map((id) => exhaustedOf.get(id)?.map((event) => `${event.error_class ?? ''}@${event.attempts}`)), [], 'one message.exhausted per pair')
  const badRows = messageIds.filter((id) => {
    const attempts = (rowsOf.get(id) ?? []).map((row) => row.attempt)
    const last = exhaustedOf.get(id)?.[0]?.attempts ?? ATTEMPTS
    return attempts.length !== last || attempts.some((attempt, i) => attempt !== i + 1)
  })
  t.same(badRows.map((id) => (rowsOf.get(id) ?? []).map((row) => `${row.attempt}:${row.error_class ?? row.status}`).join(' ')), [],
    'one row per attempt, in order: no attempt logged twice, none missing')
  const unaccounted = messageIds.filter((id) => {
    const mine = rowsOf.get(id) ?? []
    const answered = mine.filter((row) => row.http_status === 500).length
    const maybe = mine.filter((row) => row.error === STOPPED_MID_POST).length
    const got = posts.get(id) ?? 0
    return got < answered || got > answered + maybe
  })
  t.same(unaccounted.map((id) => `${posts.get(id) ?? 0} POSTs: ${(rowsOf.get(id) ?? []).map((row) => row.error_class).join(' ')}`), [],
    'every POST the receiver answered is a row that says so, or a stall mid-POST')
})
