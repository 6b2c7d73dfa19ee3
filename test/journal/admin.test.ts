/**
 * The journal's admin routes inside anvilAdmin: 401 without the token, the shapes scripts
 * rely on, a clear 400 for a bad filter; and the same routes on the dead letters in Redis without a database.
 */
import t from 'tap'
import Fastify from 'fastify'

import { addJob, jobData, openQueue, journalFixture } from '../helpers/journal.js'
import anvilAdmin from '../../plugins/admin/admin.js'
import { journalAdminRoutes } from '../../plugins/journal/admin-routes.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { createWorker, type WebhookHandler } from '../../src/worker/worker.js'
import { createReplayer } from '../../src/worker/replay.js'
import { channels } from '../../src/shared/diagnostics.js'
import type { EventLogOptions } from '../../src/event-log/event-log.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const { redis, db } = journalFixture(t)

async function adminApp (options: Partial<EventLogOptions> & { queueName: string }) {
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, routes: [journalAdminRoutes(openEventLog({ redis: redis.url, ...options }))] })
  t.teardown(async () => await app.close())
  return app
}

/** A started worker with the journal on, and its queue; both closed at the end. */
async function journalWorker (queueName: string, handler: WebhookHandler) {
  const worker = createWorker(handler, { redis: redis.url, queueName, sweepIntervalMs: 0, journal: { database: db.url } })
  const queue = openQueue(redis.url, queueName)
  t.teardown(async () => {
    await worker.close()
    await queue.close()
  })
  await worker.start()
  return { worker, queue }
}

/** Runs events through a real worker with the journal on: one done with an effect, one dead, one redelivered. */
async function process (queueName: string): Promise<void> {
  const { worker, queue } = await journalWorker(queueName, async (event) => {
    await event.once?.('charge', () => ({ chargeId: `ch_${event.eventId ?? ''}` }))
    if (event.eventType === 'invoice.payment_failed') throw new TypeError('cannot read amount')
  })
  await addJob(queue, jobData({ eventId: 'evt_ok', body: { amount: 10, currency: 'eur' } }))
  await eventually('the first delivery', async () => (await db.query("SELECT 1 FROM anvil.webhook_events WHERE id = 'evt_ok' AND status = 'done'")).length === 1)
  await addJob(queue, jobData({ eventId: 'evt_ok', body: { amount: 12, currency: 'eur' }, headers: { 'content-type': 'application/json', 'stripe-signature': 't=2,v1=def' } }))
  await addJob(queue, jobData({ eventId: 'evt_bad', eventType: 'invoice.payment_failed', provider: 'stripe' }))
  await eventually('both processed', async () => (await db.query(
    "SELECT 1 FROM anvil.webhook_events WHERE (id = 'evt_ok' AND status = 'done') OR (id = 'evt_bad' AND status = 'dead')")).length === 3)
  // The dead letter is written by the worker's failed listener, after the row is marked.
  const dead = openQueue(redis.url, `${queueName}.dead`)
  t.teardown(() => dead.close())
  await eventually('the dead letter', async () => await dead.count() === 1)
  // Stopped, so that a replay's job stays queued while the test looks at it.
  await worker.close()
}

t.test('every journal route is 401 without the token', async (t) => {
  const app = await adminApp({ database: db.url, queueName: 'admin-401' })
  const routes: Array<['GET' | 'POST' | 'DELETE', string]> = [
    ['GET', '/admin/events'], ['GET', '/admin/events/x'], ['POST', '/admin/events/x/replay'], ['POST', '/admin/events/replay'],
    ['GET', '/admin/events/replay/x'], ['DELETE', '/admin/events/replay/x'], ['GET', '/admin/dead-letters'], ['GET', '/admin/stats']
  ]
  for (const [method, url] of routes) {
    const res = await app.inject({ method, url, headers: { authorization: 'Bearer wrong-token-0123456789' } })
    t.equal(res.statusCode, 401, `${method} ${url}`)
    t.same(res.json(), { error: 'Missing or wrong admin token', code: 'ANVIL_ERR_UNAUTHORIZED' })
  }
  const doc = (await app.inject({ url: '/admin/openapi.json', headers: auth })).json()
  t.ok(['/admin/events', '/admin/events/{id}', '/admin/events/replay', '/admin/dead-letters', '/admin/stats'].every((path) => path in doc.paths), 'the routes are in the OpenAPI document')
})

t.test('list, show (payload, headers, attempts, effects, the diff against the previous delivery), replay, dead letters, stats', async (t) => {
  await process('admin-journal')
  const app = await adminApp({ database: db.url, queueName: 'admin-journal' })
  const list = await app.inject({ url: '/admin/events?provider=stripe&limit=1', headers: auth })
  t.equal(list.statusCode, 200)
  t.equal(list.json().items.length, 1)
  t.type(list.json().next, 'string')
  const next = await app.inject({ url: `/admin/events?provider=stripe&limit=1&cursor=${String(list.json().next)}`, headers: auth })
  t.same([...list.json().items, ...next.json().items].map((i: { id: string }) => i.id).sort(), ['evt_bad', 'evt_ok'])

  const dead = (await app.inject({ url: '/admin/events?status=dead', headers: auth })).json()
  t.match(dead, { items: [{ id: 'evt_bad', source: 'stripe', provider: 'stripe', eventType: 'invoice.payment_failed', status: 'dead', attempts: 1, lastError: 'cannot read amount', errorClass: 'TypeError' }], next: null })

  const shown = await app.inject({ url: '/admin/events/evt_ok', headers: auth })
  t.equal(shown.statusCode, 200)
  const event = shown.json()
  t.match(event, { id: 'evt_ok', status: 'done', attempts: 1, payload: '{"amount":12,"currency":"eur"}', payloadEncoding: 'utf8', json: { amount: 12 }, deliveries: 2 })
  t.match(event.effects, [{ action: 'charge', key: 'evt_ok:charge', result: { chargeId: 'ch_evt_ok' } }], 'the effect, applied once over two deliveries')
  t.same(event.previousDelivery.changes, [{ path: 'amount', before: 10, after: 12 }], 'the diff against the previous delivery')
  t.same(event.previousDelivery.headers, [{ path: 'stripe-signature', before: 't=1,v1=abc', after: 't=2,v1=def' }])
  t.match(event.attemptLog, [{ attempt: 1, status: 'done' }, { attempt: 1, status: 'done' }], 'one attempt per delivery')
  t.match((await app.inject({ url: '/admin/events/evt_bad', headers: auth })).json().attemptLog,
    [{ attempt: 1, status: 'failed', errorClass: 'TypeError', error: 'cannot read amount' }])
  t.equal((await app.inject({ url: '/admin/events/evt_nope', headers: auth })).json().code, 'ANVIL_ERR_EVENT_NOT_FOUND')

  const letters = (await app.inject({ url: '/admin/dead-letters', headers: auth })).json()
  t.same(letters.items.map((i: { id: string }) => i.id), ['evt_bad'])

  const stats = (await app.inject({ url: '/admin/stats?window=1h', headers: auth })).json()
  // A delivery is a row (migration 0013): evt_ok's two deliveries count twice.
  t.match(stats, { windowSeconds: 3600, byStatus: { done: 2, dead: 1 }, byProvider: [{ key: 'stripe', count: 3 }], deadLetters: { size: 1 } })
  channels.rejected.publish({ source: 'billing', provider: 'stripe', reason: 'bad_signature' })
  channels.rejected.publish({ source: 'billing', provider: 'stripe', reason: 'too_large' })
  const after = (await app.inject({ url: '/admin/stats', headers: auth })).json()
  t.same(after.signatureFailures, [{ source: 'billing', lastHour: 1, lastHourByReason: { bad_signature: 1 }, dayBaselinePerHour: 0 }], 'signature failures per source, not other rejections')

  const replay = await app.inject({ method: 'POST', url: '/admin/events/evt_bad/replay', headers: auth })
  t.equal(replay.statusCode, 200)
  t.match(replay.json(), { id: 'evt_bad', replayed: true })
  t.match((await app.inject({ method: 'POST', url: '/admin/events/evt_bad/replay', headers: auth })).json(), { replayed: false })
  // Its dead letter in Redis is marked replayed too: a dead-letter replay does not run it a second time.
  const replayer = createReplayer({ redis: redis.url, queueName: 'admin-journal' })
  t.teardown(() => replayer.close())
  const [letter] = await replayer.listDeadLetters({ includeReplayed: true })
  t.equal(letter?.data.replayedAs, replay.json().jobId)
  t.match(await replayer.replayDeadLetter(letter?.id ?? ''), { replayedNow: false, jobId: replay.json().jobId })
})

t.test('GET /admin/events/:id: an event failing twice then succeeding shows its three attempts with their error classes', async (t) => {
  const queueName = 'admin-attempts'
  const { queue } = await journalWorker(queueName, async (event) => {
    if (event.attempt === 1) throw new TypeError('cannot read amount')
    if (event.attempt === 2) throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' })
  })
  await addJob(queue, jobData({ eventId: 'evt_attempts', retry: [50, 50] }))
  await eventually('done', async () => (await db.query("SELECT 1 FROM anvil.webhook_events WHERE id = 'evt_attempts' AND status = 'done'")).length === 1)
  const app = await adminApp({ database: db.url, queueName })
  const event = (await app.inject({ url: '/admin/events/evt_attempts', headers: auth })).json()
  t.equal(event.attempts, 3, 'the count is kept as it was')
  t.same(event.attemptLog.map((a: { attempt: number, status: string, errorClass: string | null, error: string | null }) =>
    ({ attempt: a.attempt, status: a.status, errorClass: a.errorClass, error: a.error })), [
    { attempt: 1, status: 'failed', errorClass: 'TypeError', error: 'cannot read amount' },
    { attempt: 2, status: 'failed', errorClass: 'ECONNREFUSED', error: 'connection refused' },
    { attempt: 3, status: 'done', errorClass: null, error: null }
  ])
  t.ok(event.attemptLog.every((a: { startedAt: string, finishedAt: string, jobId: string }) => a.startedAt <= a.finishedAt && a.jobId === event.jobId))
  // Retention drops them with their event's day (test/journal/partitions.test.ts).
})

t.test('a dead event replayed from Redis and then from the journal (its job not yet run) runs once', async (t) => {
  const queueName = 'admin-both-replays'
  let runs = 0
  let failing = true
  const handler = async (): Promise<void> => {
    runs++
    if (failing) throw new Error('down')
  }
  const { worker: first, queue } = await journalWorker(queueName, handler)
  const dead = openQueue(redis.url, `${queueName}.dead`)
  t.teardown(() => dead.close())
  await addJob(queue, jobData({ eventId: 'evt_both_replays' }))
  await eventually('the dead letter', async () => await dead.count() === 1)
  await first.close()
  failing = false
  runs = 0

  const replayer = createReplayer({ redis: redis.url, queueName })
  t.teardown(() => replayer.close())
  const [letter] = await replayer.listDeadLetters()
  const fromRedis = await replayer.replayDeadLetter(letter?.id ?? '')
  t.equal(fromRedis.replayedNow, true)
  const app = await adminApp({ database: db.url, queueName })
  const fromJournal = (await app.inject({ method: 'POST', url: '/admin/events/evt_both_replays/replay', headers: auth })).json()
  t.match(fromJournal, { id: 'evt_both_replays', replayed: true, jobId: fromRedis.jobId }, 'the journal replay is the dead-letter replay\'s job')
  t.equal(await queue.getWaitingCount(), 1, 'one job waits')

  const { worker: second } = await journalWorker(queueName, handler)
  await eventually('done', async () => (await db.query("SELECT 1 FROM anvil.webhook_events WHERE id = 'evt_both_replays' AND status = 'done'")).length === 1)
  await second.close()
  t.equal(runs, 1, 'the handler ran once')
})

t.test('bulk replay: a dry run is { matched }; a run is 202 { id, matched }, its GET and DELETE give { id, matched, replayed, state }', async (t) => {
  await db.query(`INSERT INTO anvil.webhook_events (id, source, provider, event_type, dedupe_key, payload, received_at, status, error_class)
    SELECT 'api_' || n, 'shop', 'shopify', 'orders/create', 'ka_' || n, '\\x7b7d', now(), 'failed', 'ETIMEDOUT' FROM generate_series(1, 50) AS n`)
  const app = await adminApp({ database: db.url, queueName: 'admin-bulk' })
  const filter = { provider: 'shopify', status: 'failed' }
  const dry = await app.inject({ method: 'POST', url: '/admin/events/replay', headers: auth, payload: { filter, dryRun: true } })
  t.equal(dry.statusCode, 200)
  t.same(dry.json(), { matched: 50 })
  const started = await app.inject({ method: 'POST', url: '/admin/events/replay', headers: auth, payload: { filter, ratePerSecond: 10 } })
  t.equal(started.statusCode, 202)
  const { id, matched } = started.json()
  t.equal(matched, 50)
  const progress = (await app.inject({ url: `/admin/events/replay/${String(id)}`, headers: auth })).json()
  t.same(Object.keys(progress).sort(), ['id', 'matched', 'replayed', 'state'])
  t.equal(progress.state, 'running')
  const cancelled = await app.inject({ method: 'DELETE', url: `/admin/events/replay/${String(id)}`, headers: auth })
  t.match(cancelled.json(), { id, matched: 50, state: 'cancelled' })
  t.ok(cancelled.json().replayed < 50, 'stopped before the end at 10 a second')
  const resumed = await app.inject({ method: 'POST', url: `/admin/events/replay/${String(id)}/resume`, headers: auth })
  t.equal(resumed.json().state, 'running')
  t.equal((await app.inject({ url: '/admin/events/replay/no-such-run', headers: auth })).json().code, 'ANVIL_ERR_REPLAY_RUN_NOT_FOUND')
})

t.test('bad filters are a clear 400 { error, code }', async (t) => {
  const app = await adminApp({ database: db.url, queueName: 'admin-400' })
  const cases: Array<[string, RegExp]> = [
    ['/admin/events?status=borked', /status must be one of received, processing, done, failed, dead/],
    ['/admin/events?since=last-tuesday', /since must be an ISO 8601 time/],
    ['/admin/events?colour=red', /colour/],
    ['/admin/events?limit=0', /limit must be a whole number from 1 to 500/]
  ]
  for (const [url, message] of cases) {
    const res = await app.inject({ url, headers: auth })
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().code, 'ANVIL_ERR_INVALID_FILTER')
    t.match(res.json().error, message)
  }
  const body = await app.inject({ method: 'POST', url: '/admin/events/replay', headers: auth, payload: { filter: { status: 'nope' } } })
  t.equal(body.statusCode, 400)
  t.equal(body.json().code, 'ANVIL_ERR_INVALID_FILTER')
  const rate = await app.inject({ method: 'POST', url: '/admin/events/replay', headers: auth, payload: { ratePerSecond: 0 } })
  t.equal(rate.statusCode, 400)
  t.match(rate.json(), { code: 'ANVIL_ERR_BAD_REQUEST', error: /ratePerSecond/ })
})

t.test('without a database the same routes work on the dead letters in Redis', async (t) => {
  const queueName = 'admin-redis'
  const worker = createWorker(() => { throw new TypeError('nope') }, { redis: redis.url, queueName, sweepIntervalMs: 0 })
  const queue = openQueue(redis.url, queueName)
  t.teardown(async () => {
    await worker.close()
    await queue.close()
  })
  await worker.start()
  await addJob(queue, jobData({ eventId: 'evt_r1', provider: 'github', source: 'repos', eventType: 'push' }))
  await addJob(queue, jobData({ eventId: 'evt_r2' }))
  const app = await adminApp({ queueName })
  await eventually('two dead letters', async () => (await app.inject({ url: '/admin/dead-letters', headers: auth })).json().items.length === 2)
  const github = (await app.inject({ url: '/admin/events?provider=github', headers: auth })).json()
  t.match(github, { items: [{ source: 'repos', provider: 'github', eventType: 'push', status: 'dead', errorClass: 'exhausted' }], next: null })
  const dry = await app.inject({ method: 'POST', url: '/admin/events/replay', headers: auth, payload: { filter: { provider: 'stripe' }, dryRun: true } })
  t.same(dry.json(), { matched: 1 })
  const run = await app.inject({ method: 'POST', url: '/admin/events/replay', headers: auth, payload: { filter: { provider: 'stripe' } } })
  t.equal(run.statusCode, 202)
  await eventually('the run to finish', async () => (await app.inject({ url: `/admin/events/replay/${String(run.json().id)}`, headers: auth })).json().state === 'done')
  t.match((await app.inject({ url: `/admin/events/replay/${String(run.json().id)}`, headers: auth })).json(), { matched: 1, replayed: 1, state: 'done' })
  const one = (await app.inject({ url: `/admin/events/${String(github.items[0].id)}`, headers: auth })).json()
  t.match(one, { status: 'dead', provider: 'github', payloadEncoding: 'utf8' })
})
