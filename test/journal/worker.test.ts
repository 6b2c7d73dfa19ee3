/**
 * With `journal: { database }` the worker writes each event's row once, with its attempt's outcome (in the
 * handler's transaction when it has one), and gives the handler `db`, `once` and `effectKey`, whose effects
 * commit with the row `done` or not at all.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'

import { addJob, jobData, openQueue, journalFixture } from '../helpers/journal.js'
import { createWorker, type WebhookHandler } from '../../src/worker/worker.js'
import type { WorkerOptions } from '../../src/worker/worker-options.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const { redis, db } = journalFixture(t)
beforeStep(t, async () => { await db.query('CREATE TABLE public.charges (event_id text, amount int)') })

interface Row { id: string, status: string, attempts: number, last_error: string | null, error_class: string | null, job_id: string, payload: Buffer, headers: Record<string, string>, processed_at: Date | null, deliveries: number }

async function row (id: string): Promise<Row | undefined> {
  return (await db.query<Row>('SELECT * FROM anvil.webhook_events WHERE id = $1 ORDER BY received_at DESC LIMIT 1', [id]))[0]
}

function start (queueName: string, handler: WebhookHandler, extra: Partial<WorkerOptions> = {}) {
  const worker = createWorker(handler, { redis: redis.url, queueName, sweepIntervalMs: 0, journal: { database: db.url }, ...extra })
  const queue = openQueue(redis.url, queueName)
  t.teardown(async () => {
    await worker.close()
    await queue.close()
  })
  return { worker, queue }
}

t.test('the row is written once, done, after the handler; bytes, JSON view (built on read) and headers kept', async (t) => {
  const seen: Array<Row | undefined> = []
  const { worker, queue } = start('journal-first', async (event) => { seen.push(await row(event.eventId ?? '')) })
  const log = openEventLog({ redis: redis.url, database: db.url, queueName: 'journal-first' })
  t.teardown(async () => { await log.close() })
  await worker.start()
  const data = jobData({ eventId: 'evt_first', body: { amount: 42 } })
  const jobId = await addJob(queue, data)
  await eventually('done', async () => (await row('evt_first'))?.status === 'done')
  t.same(seen, [undefined], 'the handler ran before any row: until its outcome, the event is its job')
  const done = await row('evt_first')
  t.equal(done?.attempts, 1)
  t.equal(done?.job_id, jobId)
  t.same(done?.payload, Buffer.from(JSON.stringify({ amount: 42 })), 'the payload byte for byte')
  t.same((await log.get('evt_first')).json, { amount: 42 }, 'and its JSON view')
  t.equal(done?.headers['stripe-signature'], 't=1,v1=abc')
  t.ok(done?.processed_at instanceof Date)
  const [meta] = await db.query<{ source: string, provider: string, event_type: string, signature: string, request_id: string }>(
    'SELECT source, provider, event_type, signature, request_id FROM anvil.webhook_events WHERE id = $1', ['evt_first'])
  t.same(meta, { source: 'stripe', provider: 'stripe', event_type: 'invoice.paid', signature: 't=1,v1=abc', request_id: data.requestId })
})

t.test('an event without an id is journalled under its key; a non-JSON body has no JSON view', async (t) => {
  const { worker, queue } = start('journal-key', () => {})
  const log = openEventLog({ redis: redis.url, database: db.url, queueName: 'journal-key' })
  t.teardown(async () => { await log.close() })
  await worker.start()
  const data = jobData({ eventId: undefined, body: 'not json \u0000 at all', contentType: 'text/plain' })
  await addJob(queue, data)
  await eventually('done', async () => (await row(data.key))?.status === 'done')
  t.equal((await log.get(data.key)).json, undefined)
})

t.test('failed attempts record the attempt, the error and its class; the last one is dead', async (t) => {
  const { worker, queue } = start('journal-failing', async (event) => {
    const err = new Error(`no luck on attempt ${event.attempt}`) as Error & { code?: string }
    err.code = 'ECONNREFUSED'
    throw err
  })
  await worker.start()
  await addJob(queue, jobData({ eventId: 'evt_fail', retry: [50, 50] }))
  await eventually('dead', async () => (await row('evt_fail'))?.status === 'dead')
  const dead = await row('evt_fail')
  t.equal(dead?.attempts, 3)
  t.equal(dead?.last_error, 'no luck on attempt 3')
  t.equal(dead?.error_class, 'ECONNREFUSED')
  const log = await db.query<{ attempt: number, status: string, error_class: string, error: string }>(
    "SELECT attempt, status, error_class, error FROM anvil.webhook_event_attempts WHERE event_id = 'evt_fail' ORDER BY attempt")
  t.same(log, [1, 2, 3].map((n) => ({ attempt: n, status: 'failed', error_class: 'ECONNREFUSED', error: `no luck on attempt ${n}` })), 'each attempt is logged, the dead one as failed')
})

t.test('an event failing twice then succeeding logs three attempts with their error classes, in the mark\'s transaction', async (t) => {
  const { worker, queue } = start('journal-attempt-log', async (event) => {
    // The handler's transaction is begun, so its mark done (and its attempt's row) commit with it.
    await event.db?.query('SELECT 1')
    if (event.attempt === 1) throw new TypeError('cannot read amount')
    if (event.attempt === 2) throw Object.assign(new Error('upstream timed out'), { code: 'ETIMEDOUT' })
  })
  await worker.start()
  const jobId = await addJob(queue, jobData({ eventId: 'evt_third_time', retry: [50, 50] }))
  await eventually('done', async () => (await row('evt_third_time'))?.status === 'done')
  const log = await db.query<{ attempt: number, status: string, error_class: string | null, error: string | null, job_id: string, started_at: Date, finished_at: Date }>(
    "SELECT attempt, status, error_class, error, job_id, started_at, finished_at FROM anvil.webhook_event_attempts WHERE event_id = 'evt_third_time' ORDER BY attempt")
  t.same(log.map(({ attempt, status, error_class: errorClass, error }) => ({ attempt, status, errorClass, error })), [
    { attempt: 1, status: 'failed', errorClass: 'TypeError', error: 'cannot read amount' },
    { attempt: 2, status: 'failed', errorClass: 'ETIMEDOUT', error: 'upstream timed out' },
    { attempt: 3, status: 'done', errorClass: null, error: null }
  ])
  t.ok(log.every((a) => a.job_id === jobId && a.started_at instanceof Date && a.started_at <= a.finished_at), 'each with its job and times')
})

t.test('a rollback undoes the effects, the handler\'s writes and the mark; the retry applies them once', async (t) => {
  let runs = 0
  const { worker, queue } = start('journal-rollback', async (event) => {
    runs++
    await event.db?.query('INSERT INTO public.charges (event_id, amount) VALUES ($1, $2)', [event.eventId, 100])
    const charge = await event.once?.('charge', () => ({ charged: runs }))
    if (runs === 1) {
      t.equal(await db.query('SELECT 1 FROM anvil.webhook_effects').then((r) => r.length), 0, 'nothing is visible before the commit')
      throw new Error('fails after its effects')
    }
    t.same(charge, { charged: 2 }, 'the retry ran the effect again: the first was rolled back')
  })
  await worker.start()
  await addJob(queue, jobData({ eventId: 'evt_rollback', retry: [50] }))
  await eventually('done', async () => (await row('evt_rollback'))?.status === 'done')
  t.equal(runs, 2)
  t.same(await db.query('SELECT event_id, amount FROM public.charges'), [{ event_id: 'evt_rollback', amount: 100 }], 'one charge row')
  t.same(await db.query('SELECT key, action, result FROM anvil.webhook_effects'), [{ key: 'evt_rollback:charge', action: 'charge', result: { charged: 2 } }])
  const done = await row('evt_rollback')
  t.equal(done?.last_error, null, 'the mark done clears the last error')
  t.equal(done?.attempts, 2)
})

t.test('PostgreSQL ends the handler\'s connection mid-transaction: that attempt fails, the process stays up, the retry is done', async (t) => {
  let ended = false
  const idleInTransaction = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'"
  const { worker, queue } = start('journal-terminated', async (event) => {
    await event.once?.('first', () => 1)
    if (!ended) {
      ended = true
      await db.query(`SELECT pg_terminate_backend(pid) FROM (${idleInTransaction}) AS held`)
      await eventually('the backend gone', async () => (await db.query(idleInTransaction)).length === 0)
    }
    await event.once?.('second', () => 2)
  })
  await worker.start()
  await addJob(queue, jobData({ eventId: 'evt_terminated', retry: [50] }))
  await eventually('done', async () => (await row('evt_terminated'))?.status === 'done')
  t.equal((await row('evt_terminated'))?.attempts, 2, 'the ended attempt failed and the retry committed')
})

t.test('once() under two concurrent runs of one event (two deliveries): the effect applies once, both see its result', async (t) => {
  let applied = 0
  const results: unknown[] = []
  let bothStarted = (): void => {}
  const bothRunning = { promise: new Promise<void>((resolve) => { bothStarted = resolve }), resolve: () => bothStarted() }
  let running = 0
  const { worker, queue } = start('journal-concurrent', async (event) => {
    if (++running === 2) bothRunning.resolve()
    await bothRunning.promise
    t.equal(event.effectKey?.('charge'), 'evt_twice:charge')
    results.push(await event.once?.('charge', async () => {
      applied++
      await sleep(300)
      return { chargeId: `ch_${applied}` }
    }))
  }, { concurrency: 2 })
  // Two deliveries: received apart, each a row of its own.
  await addJob(queue, jobData({ eventId: 'evt_twice', receivedAt: Date.now() - 1000 }))
  await addJob(queue, jobData({ eventId: 'evt_twice' }))
  await worker.start()
  await eventually('both runs', () => results.length === 2)
  t.equal(applied, 1, 'the effect ran once')
  t.same(results, [{ chargeId: 'ch_1' }, { chargeId: 'ch_1' }])
  await eventually('both done', async () => (await db.query("SELECT 1 FROM anvil.webhook_events WHERE id = 'evt_twice' AND status = 'done'")).length === 2)
  const log = openEventLog({ redis: redis.url, database: db.url, queueName: 'journal-concurrent' })
  t.teardown(async () => { await log.close() })
  t.equal((await log.get('evt_twice')).deliveries, 2, 'the event shows both deliveries')
})

t.test('a failed event replayed while its retry waits runs on the replay\'s job; the retry, when due, runs nothing', async (t) => {
  const runs: Array<{ jobId: string, attempt: number }> = []
  const queueName = 'journal-overtaken'
  const { worker, queue } = start(queueName, async (event) => {
    runs.push({ jobId: event.id, attempt: event.attempt })
    if (runs.length === 1) throw new Error('the bug, before the fix')
  })
  const log = openEventLog({ redis: redis.url, database: db.url, queueName })
  t.teardown(async () => { await log.close() })
  await worker.start()
  // The retry is due 1.5 s after the first attempt fails: the replay comes in between.
  const jobId = await addJob(queue, jobData({ eventId: 'evt_overtaken', retry: [1500] }))
  await eventually('failed, its retry waiting', async () => (await row('evt_overtaken'))?.status === 'failed')
  const replay = await log.replay('evt_overtaken')
  t.ok(replay.replayed)
  t.not(replay.jobId, jobId, 'the replay is a job of its own')
  await eventually('done on the replay\'s job', async () => (await row('evt_overtaken'))?.status === 'done')
  const old = await queue.getJob(jobId)
  await eventually('the old retry ran and completed', async () => (await old?.getState()) === 'completed')
  t.same(runs.map((r) => r.jobId), [jobId, replay.jobId], 'the handler ran for the first attempt and the replay, not for the overtaken retry')
  const done = await row('evt_overtaken')
  t.equal(done?.job_id, replay.jobId, 'the row stays with the replay')
  t.equal(done?.status, 'done')
})

t.test('a given pool is left open; bad journal options are one line', async (t) => {
  const pool = db.pool()
  const { worker } = start('journal-pool', () => {}, { journal: { database: pool } })
  await worker.start()
  await worker.close()
  t.same((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }])
  t.throws(() => createWorker(() => {}, { redis: redis.url, journal: { database: db.url, retentionDays: -1 } }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /journal\.retentionDays/ })
  t.throws(() => createWorker(() => {}, { redis: redis.url, journal: { database: db.url, retentionDays: 36_501 } }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /journal\.retentionDays/ })
  t.throws(() => createWorker(() => {}, { redis: redis.url, journal: { database: 'mysql://x' } }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /postgres/ })
  t.throws(() => createWorker(() => {}, { redis: redis.url, journal: { database: db.url, extra: 1 } as never }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /extra/ })
})

t.test('a router\'s handlers get db, once and effectKey too', async (t) => {
  const { createRouter } = await import('../../src/handlers/router.js')
  const seen: unknown[] = []
  const router = createRouter().on('stripe:invoice.paid', async (event) => {
    seen.push(await event.once?.('notify', () => event.effectKey?.('notify')))
  })
  const { worker, queue } = start('journal-router', router)
  await worker.start()
  await addJob(queue, jobData({ eventId: 'evt_routed' }))
  await eventually('done', async () => (await row('evt_routed'))?.status === 'done')
  t.same(seen, ['evt_routed:notify'])
})

t.test('the worker deletes rows past the retention on its own timer', async (t) => {
  await db.query(`INSERT INTO anvil.webhook_events (id, source, dedupe_key, payload, received_at, status)
    VALUES ('evt_ancient', 'stripe', 'k_ancient', '\\x7b7d', now() - interval '3 days', 'done'), ('evt_recent', 'stripe', 'k_recent', '\\x7b7d', now(), 'done')`)
  const { worker } = start('journal-retention', () => {}, { journal: { database: db.url, retentionDays: 2, retentionIntervalMs: 50 } })
  await worker.start()
  await eventually('the old row to go', async () => await row('evt_ancient') === undefined)
  t.ok(await row('evt_recent'), 'the recent one stays')
})

t.test('a worker prunes once at start, not only after its first interval', async (t) => {
  await db.query(`INSERT INTO anvil.webhook_events (id, source, dedupe_key, payload, received_at, status)
    VALUES ('evt_ancient_2', 'stripe', 'k_ancient_2', '\\x7b7d', now() - interval '3 days', 'done')`)
  const { worker } = start('journal-retention-start', () => {}, { journal: { database: db.url, retentionDays: 2, retentionIntervalMs: 3_600_000 } })
  await worker.start()
  await eventually('the old row to go', async () => await row('evt_ancient_2') === undefined)
  t.pass('gone before the first hourly pass')
})
