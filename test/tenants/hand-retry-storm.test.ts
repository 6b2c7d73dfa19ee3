/**
 * A hostile tenant's hand-retry storm (issue 33, item 1), against real processes: `anvil serve` (the admin API),
 * `anvil worker` (concurrency 10) and receivers on loopback. Tenant `storm` holds a write portal token and sends 300
 * `POST /admin/deliveries/:id/retry` at once for one delivery of its healthy endpoint. One hand retry of a pair is
 * queued at a time (the others are answered 200 `alreadyQueued`), marking the pair delivered waits on no other
 * delivery (no deadlock), and the log holds what the receiver answered.
 */
import t, { type Test } from 'tap'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Queue } from 'bullmq'
import { startCli } from '../helpers/cli.js'

import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const ADMIN_TOKEN = 'admin-token-for-the-hand-retry-storm'
const STORM = 300
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())

/** A receiver that answers 200 and counts, per webhook-id; `hold` keeps the answers back until `release`. */
async function receiver (t: Test) {
  const answered = new Map<string, number>()
  let arrived = 0
  let held: Array<() => void> | undefined
  const answer = (id: string, res: ServerResponse): void => {
    // A request its sender gave up on (its timeout) gets no answer.
    if (res.socket === null || res.socket.destroyed) return
    answered.set(id, (answered.get(id) ?? 0) + 1)
    res.end('ok')
  }
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      arrived++
      const id = String(req.headers['webhook-id'])
      if (held === undefined) answer(id, res)
      else held.push(() => answer(id, res))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    answered,
    arrived: () => arrived,
    hold () { held = [] },
    release () { const waiting = held ?? []; held = undefined; for (const go of waiting) go() }
  }
}

t.test('300 concurrent hand retries of one delivery: one retry queued, no deadlock, a log that says what the receiver answered', async (t) => {
  const env = { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' }
  // The tenant's per-minute limits raised past the storm: this test holds what each retry does (test/tenants/quotas.test.ts holds the limits).
  const limits = `retriesPerMinute=${STORM},writesPerMinute=${STORM}`
  const serve = startCli(t, ['serve'], { env: { ...env, WEBHOOK_SECRET: 'whsec_hand_retry_storm_0123456789', ANVIL_ADMIN_TOKEN: ADMIN_TOKEN, ANVIL_PORTAL_LIMITS: limits } })
  const worker = startCli(t, ['worker'], { env: { ...env, WORKER_CONCURRENCY: '10', ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8' } })
  const base = `http://127.0.0.1:${await serve.listeningPort('anvil serve: listening')}/admin`
  await worker.log('anvil worker: dispatching and delivering outgoing webhooks')
  const call = async (token: string, method: string, path: string, body?: object): Promise<{ status: number, body: Record<string, unknown> }> => {
    const res = await fetch(base + path, {
      method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body)
    })
    return { status: res.status, body: await res.json() as Record<string, unknown> }
  }
  const admin = async (method: string, path: string, body?: object): Promise<Record<string, unknown>> => {
    const res = await call(ADMIN_TOKEN, method, path, body)
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }

  const storm = await receiver(t)
  const quiet = await receiver(t)
  const stormEndpoint = await admin('POST', '/endpoints', { url: storm.url, tenant: 'storm' })
  await admin('POST', '/endpoints', { url: quiet.url, tenant: 'quiet' })
  const { messageId } = await admin('POST', '/messages', { type: 'order.paid', data: { n: 1 }, tenant: 'storm' }) as { messageId: string }
  const rowsOfPair = async (): Promise<Array<{ id: string, status: string, http_status: number | null, error_class: string | null }>> =>
    await db.query('SELECT id, status, http_status, error_class FROM anvil.deliveries WHERE message_id = $1 AND endpoint_id = $2 ORDER BY id', [messageId, stormEndpoint.id])
  await eventually('the first delivery to be logged', async () => (await rowsOfPair()).some((row) => row.status === 'success'), 30_000)
  const [first] = await rowsOfPair()
  const { token } = await admin('POST', '/portal/tokens', { tenant: 'storm', scopes: ['read', 'write'] }) as { token: string }

  // The retry's POST is held until every request has its answer: one hand retry is then in flight for the whole storm.
  storm.hold()
  const answers = await Promise.all(Array.from({ length: STORM }, async () => await call(token, 'POST', `/deliveries/${String(first?.id)}/retry`)))
  const byStatus = new Map<number, number>()
  for (const answer of answers) byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1)
  t.same(Object.fromEntries(byStatus), { 202: 1, 200: STORM - 1 }, 'one 202, the rest 200')
  const queued = answers.find((answer) => answer.status === 202)?.body
  t.match(queued, { messageId, endpointId: stormEndpoint.id, jobId: String, alreadyQueued: false })
  t.ok(answers.filter((answer) => answer.status === 200).every((answer) => answer.body.alreadyQueued === true && answer.body.jobId === queued?.jobId),
    'each 200 names the retry already queued')

  storm.release()
  for (let i = 0; i < 8; i++) await admin('POST', '/messages', { type: 'order.paid', data: { i }, tenant: 'quiet' })
  await eventually('the quiet tenant\'s 8 deliveries', () => quiet.arrived() === 8, 60_000)
  const jobs = new Queue('outbound', { connection: { url: redis.url }, prefix: '{anvil}' })
  t.teardown(() => jobs.close())
  await eventually('every delivery job to end', async () => {
    const counts = await jobs.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
    return Object.values(counts).every((n) => n === 0) && (await rowsOfPair()).every((row) => row.status !== 'started')
  }, 120_000)

  const posts = storm.answered.get(messageId) ?? 0
  t.equal(posts, 2, 'the first delivery and one hand retry reached the receiver')
  const rows = await rowsOfPair()
  t.same(rows.map((row) => [row.status, row.http_status, row.error_class]), Array.from({ length: posts }, () => ['success', 200, null]),
    'one success row per POST the receiver answered 200, and nothing else')
  const [{ deadlocks }] = await db.query<{ deadlocks: string }>('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()') as [{ deadlocks: string }]
  t.equal(Number(deadlocks), 0, 'no deadlock in the database')
  t.notMatch(worker.output, /deadlock detected/, 'none in the worker\'s log')
  t.equal(await worker.stop(), 0)
  t.equal(await serve.stop(), 0)
})
