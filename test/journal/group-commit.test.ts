/**
 * Group commit (`journal.groupCommit`): several events in one transaction, one commit for the group. Events
 * whose handlers only use `once` have their rows and effects written by the group's one statement; handlers
 * that write through `event.db` run each in a savepoint; a handler that throws rolls back alone and retries; a
 * refused row or a taken effect is written alone, never taking the group down; the option is validated.
 */
import t from 'tap'

import { addJob, jobData, openQueue, journalFixture } from '../helpers/journal.js'
import { createWorker, type WebhookHandler } from '../../src/worker/worker.js'
import type { WorkerOptions } from '../../src/worker/worker-options.js'
import { loadWorkerConfig } from '../../cli/config/load-config.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const { redis, db } = journalFixture(t)
beforeStep(t, async () => { await db.query('CREATE TABLE public.charges (event_id text, attempt int, tx xid8 NOT NULL DEFAULT pg_current_xact_id())') })

const EVENTS = 24

function start (queueName: string, handler: WebhookHandler, extra: Partial<WorkerOptions> = {}) {
  const worker = createWorker(handler, {
    redis: redis.url, queueName, sweepIntervalMs: 0, concurrency: 12, journal: { database: db.url, groupCommit: { maxEvents: 6, maxWaitMs: 50 } }, ...extra
  })
  const queue = openQueue(redis.url, queueName)
  t.teardown(async () => {
    await worker.close()
    await queue.close()
  })
  return { worker, queue }
}

const doneCount = async (prefix: string): Promise<number> =>
  Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM anvil.webhook_events WHERE status = 'done' AND id LIKE $1", [`${prefix}%`]))[0]?.n)

t.test('events share commits: their writes and rows commit in fewer transactions than events, each applied once', async (t) => {
  const { worker, queue } = start('group-share', async (event) => {
    await event.db?.query('INSERT INTO public.charges (event_id, attempt) VALUES ($1, $2)', [event.eventId, event.attempt])
    await event.once?.('receipt', () => ({ sent: true }))
  })
  for (let i = 0; i < EVENTS; i++) await addJob(queue, jobData({ eventId: `evt_share_${i}` }))
  await worker.start()
  await eventually('all done', async () => await doneCount('evt_share_') === EVENTS)
  const [charges] = await db.query<{ n: string, txs: string }>("SELECT count(*) AS n, count(DISTINCT tx) AS txs FROM public.charges WHERE event_id LIKE 'evt_share_%'")
  t.equal(Number(charges?.n), EVENTS, 'one write per event')
  t.ok(Number(charges?.txs) < EVENTS, `${EVENTS} events in ${charges?.txs} transactions`)
  const [rows] = await db.query<{ n: string }>("SELECT count(*) AS n FROM anvil.webhook_events WHERE id LIKE 'evt_share_%'")
  t.equal(Number(rows?.n), EVENTS, 'one row per event, written done')
  const [effects] = await db.query<{ n: string }>("SELECT count(*) AS n FROM anvil.webhook_effects WHERE event_id LIKE 'evt_share_%' AND result = '{\"sent\": true}'")
  t.equal(Number(effects?.n), EVENTS, 'each once recorded with its result')
})

t.test('a handler that throws rolls back to its savepoint alone: its event retries, the others of its group commit', async (t) => {
  const { worker, queue } = start('group-throw', async (event) => {
    await event.db?.query('INSERT INTO public.charges (event_id, attempt) VALUES ($1, $2)', [event.eventId, event.attempt])
    await event.once?.('receipt', () => ({ sent: event.attempt }))
    if (event.eventId === 'evt_throw_3' && event.attempt === 1) throw new Error('declined')
  })
  for (let i = 0; i < 6; i++) await addJob(queue, jobData({ eventId: `evt_throw_${i}`, retry: [50] }))
  await worker.start()
  await eventually('all done', async () => await doneCount('evt_throw_') === 6)
  const charges = await db.query<{ event_id: string, attempt: number }>("SELECT event_id, attempt FROM public.charges WHERE event_id LIKE 'evt_throw_%' ORDER BY event_id")
  t.same(charges, [0, 1, 2, 3, 4, 5].map((i) => ({ event_id: `evt_throw_${i}`, attempt: i === 3 ? 2 : 1 })), 'the thrower\'s first write rolled back, every other kept')
  const [effect] = await db.query<{ result: unknown }>("SELECT result FROM anvil.webhook_effects WHERE key = 'evt_throw_3:receipt'")
  t.same(effect?.result, { sent: 2 }, 'its once ran again on the retry: the first claim was rolled back')
  const log = await db.query<{ attempt: number, status: string, error: string | null }>(
    "SELECT attempt, status, error FROM anvil.webhook_event_attempts WHERE event_id = 'evt_throw_3' ORDER BY attempt")
  t.same(log, [{ attempt: 1, status: 'failed', error: 'declined' }, { attempt: 2, status: 'done', error: null }])
})

t.test('once-only handlers: the group\'s rows and effects are one statement, one transaction (no savepoint each)', async (t) => {
  const { worker, queue } = start('group-once', async (event) => { await event.once?.('receipt', () => ({ sent: event.eventId })) })
  for (let i = 0; i < EVENTS; i++) await addJob(queue, jobData({ eventId: `evt_once_${i}` }))
  await worker.start()
  await eventually('all done', async () => await doneCount('evt_once_') === EVENTS)
  // A row written in a savepoint carries the savepoint's own transaction id: one id for many rows is one statement's.
  const [rows] = await db.query<{ n: string, txs: string }>("SELECT count(*) AS n, count(DISTINCT xmin::text) AS txs FROM anvil.webhook_events WHERE id LIKE 'evt_once_%'")
  t.equal(Number(rows?.n), EVENTS)
  t.ok(Number(rows?.txs) <= EVENTS / 2, `${EVENTS} rows in ${rows?.txs} transactions`)
  const [effects] = await db.query<{ n: string, apart: string }>(`SELECT count(*) AS n, count(*) FILTER (WHERE f.xmin::text <> e.xmin::text) AS apart
    FROM anvil.webhook_effects f JOIN anvil.webhook_events e ON e.id = f.event_id WHERE f.key LIKE 'evt_once_%' AND f.result = jsonb_build_object('sent', f.event_id)`)
  t.same({ n: Number(effects?.n), apart: Number(effects?.apart) }, { n: EVENTS, apart: 0 }, 'each effect, with its result, committed with its row')
})

t.test('a taken effect and a refused row are written alone: the rest of their group commits', async (t) => {
  const seen = new Map<string, unknown[]>()
  const { worker, queue } = start('group-alone', async (event) => {
    const result = await event.once?.('receipt', () => ({ sent: 'now' }))
    seen.set(event.eventId ?? '', [...seen.get(event.eventId ?? '') ?? [], result])
  })
  // Another delivery recorded evt_alone_2's effect; another job holds evt_alone_4's row (the same delivery).
  await db.query("INSERT INTO anvil.webhook_effects (key, event_id, action, result) VALUES ('evt_alone_2:receipt', 'evt_alone_2', 'receipt', '{\"sent\": \"earlier\"}')")
  const held = jobData({ eventId: 'evt_alone_4' })
  await db.query(`INSERT INTO anvil.webhook_events (id, received_at, source, dedupe_key, payload, status, attempts, job_id)
    VALUES ('evt_alone_4', $1, 'stripe', $2, '\\x7b7d', 'done', 1, 'e_other')`, [new Date(held.receivedAt), held.key])
  for (let i = 0; i < 6; i++) await addJob(queue, i === 4 ? held : jobData({ eventId: `evt_alone_${i}`, retry: [50] }))
  await worker.start()
  await eventually('the others done, and the taken one on its retry', async () => await doneCount('evt_alone_') === 6)
  t.same(seen.get('evt_alone_2'), [{ sent: 'now' }, { sent: 'earlier' }], 'its first attempt failed (ANVIL_ERR_ONCE_TAKEN); the retry returned the stored result')
  const log = await db.query<{ attempt: number, status: string, error_class: string | null }>(
    "SELECT attempt, status, error_class FROM anvil.webhook_event_attempts WHERE event_id = 'evt_alone_2' ORDER BY attempt")
  t.same(log, [{ attempt: 1, status: 'failed', error_class: 'ANVIL_ERR_ONCE_TAKEN' }, { attempt: 2, status: 'done', error_class: null }])
  t.same(await db.query("SELECT job_id FROM anvil.webhook_events WHERE id = 'evt_alone_4'"), [{ job_id: 'e_other' }], 'the held row keeps its job')
  t.same(await db.query("SELECT 1 FROM anvil.webhook_effects WHERE key = 'evt_alone_4:receipt'"), [], 'and the refused event\'s effect was rolled back with it')
  const [others] = await db.query<{ n: string }>("SELECT count(*) AS n FROM anvil.webhook_effects WHERE key ~ '^evt_alone_[0135]:' AND result = '{\"sent\": \"now\"}'")
  t.equal(Number(others?.n), 4, 'the others\' effects committed')
})

t.test('the option is validated, and ANVIL_JOURNAL_GROUP_COMMIT sets it', async (t) => {
  const base = { redis: redis.url, sweepIntervalMs: 0 }
  t.throws(() => createWorker(async () => {}, { ...base, journal: { database: db.url, groupCommit: { maxEvents: 1, maxWaitMs: 5 } } }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /journal.groupCommit.maxEvents: Expected integer to be greater or equal to 2/ })
  t.throws(() => createWorker(async () => {}, { ...base, journal: { database: db.url, groupCommit: { maxEvents: 8 } as never } }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /maxWaitMs/ })
  const env = { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url }
  t.same(loadWorkerConfig({ ...env, ANVIL_JOURNAL_GROUP_COMMIT: '16,5' }).journal?.groupCommit, { maxEvents: 16, maxWaitMs: 5 })
  t.equal(loadWorkerConfig(env).journal?.groupCommit, undefined, 'off by default')
  for (const bad of ['16', '1,5', '16,5,1', 'x,5', '16,2000']) {
    t.throws(() => loadWorkerConfig({ ...env, ANVIL_JOURNAL_GROUP_COMMIT: bad }), { message: /ANVIL_JOURNAL_GROUP_COMMIT must be maxEvents,maxWaitMs/ }, bad)
  }
})
