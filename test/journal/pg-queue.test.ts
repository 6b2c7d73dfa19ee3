/**
 * `journal: { queue: 'postgres' }` (issue 35, contract 3): the ingress inserts each accepted event into the
 * journal's queue table (deduplicated by its key), workers claim it from there, woken by NOTIFY, and write its
 * journal row once with the outcome, retrying on the job's schedule; the last failure leaves it `dead`, and a
 * journal replay queues it again. Over real HTTP and a real PostgreSQL; nothing goes through BullMQ.
 */
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import anvil from '../../index.js'
import { SECRET, signed } from '../helpers/app.js'
import { journalFixture } from '../helpers/journal.js'
import { createWorker, type WebhookHandler } from '../../src/worker/worker.js'
import type { WorkerOptions } from '../../src/worker/worker-options.js'
import { replayEvent } from '../../src/event-log/event-replay.js'
import { openDatabase } from '../../src/db/database.js'
import { DEFAULT_RETENTION } from '../../src/shared/constants.js'
import { openQueue } from '../helpers/journal.js'
import { eventually } from '../helpers/eventually.js'

const { redis, db } = journalFixture(t)

interface Row { id: string, status: string, attempts: number, job_id: string, last_error: string | null }
/** The journal row of the event the ingress answered `jobId` for (its id is the body's key: the anvil preset has no event id). */
const row = async (jobId: string): Promise<Row | undefined> =>
  (await db.query<Row>(`SELECT e.id, e.status, e.attempts, e.job_id, e.last_error FROM anvil.webhook_events e
    WHERE e.id = (SELECT id FROM anvil.webhook_events WHERE job_id = $1 UNION SELECT event_id FROM anvil.webhook_event_queue WHERE job_id = $1 LIMIT 1)
    ORDER BY e.received_at DESC LIMIT 1`, [jobId]))[0]
const queued = async (): Promise<number> => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM anvil.webhook_event_queue'))[0]?.n)

/** The ingress on a real port, its events going to the journal's queue. */
async function ingress (t: Test, queueName: string, retrySchedule: number[] = []): Promise<(body: object) => Promise<{ status: number, json: { jobId: string, replayed: boolean } }>> {
  const app = Fastify({ logger: false })
  await app.register(anvil, { redis: redis.url, secret: SECRET, queueName, retrySchedule, journal: { queue: 'postgres', database: db.url } })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await app.close() })
  return async (body) => {
    const request = signed(JSON.stringify(body))
    const res = await fetch(address + request.url, { method: 'POST', headers: request.headers, body: new Uint8Array(request.payload) })
    return { status: res.status, json: await res.json() as { jobId: string, replayed: boolean } }
  }
}

function worker (t: Test, queueName: string, handler: WebhookHandler, extra: Partial<WorkerOptions> = {}) {
  const w = createWorker(handler, { redis: redis.url, queueName, sweepIntervalMs: 0, journal: { database: db.url, queue: 'postgres', pollIntervalMs: 600_000 }, ...extra })
  t.teardown(async () => { await w.close() })
  return w
}

t.test('an event posted is queued in PostgreSQL, claimed on NOTIFY, handled once with its effect; a duplicate makes no job', async (t) => {
  await db.query('CREATE TABLE IF NOT EXISTS public.charges (event_id text)')
  const post = await ingress(t, 'pgq-first')
  const ran: string[] = []
  const w = worker(t, 'pgq-first', async (event) => {
    ran.push(event.id)
    await event.once?.('charge', async () => await event.db?.query('INSERT INTO public.charges (event_id) VALUES ($1)', [event.key]))
  })
  await w.start()
  const first = await post({ amount: 1 })
  t.equal(first.status, 202)
  t.equal(first.json.replayed, false)
  // The poll is ten minutes: only the ingress's NOTIFY can have woken the worker.
  await eventually('done', async () => (await row(first.json.jobId))?.status === 'done')
  t.equal((await row(first.json.jobId))?.attempts, 1)
  const again = await post({ amount: 1 })
  t.same(again.json, { jobId: first.json.jobId, replayed: true }, 'a duplicate within the window is answered with the first job')
  const other = await post({ amount: 2 })
  t.equal(other.json.replayed, false)
  await eventually('the second done', async () => (await row(other.json.jobId))?.status === 'done')
  t.same(ran.sort(), [first.json.jobId, other.json.jobId].sort(), 'each handler ran once')
  t.equal((await db.query('SELECT event_id FROM public.charges')).length, 2, 'one effect an event')
  t.equal(await queued(), 0, 'the queue holds nothing once the outcomes are written')
  const bull = openQueue(redis.url, 'pgq-first')
  t.teardown(async () => { await bull.close() })
  t.same(await bull.getJobCounts('waiting', 'completed', 'active'), { waiting: 0, completed: 0, active: 0 }, 'nothing went through BullMQ')
})

t.test('a failing attempt is retried on the schedule; the last failure is dead; a journal replay queues it again', async (t) => {
  const post = await ingress(t, 'pgq-retry', [50, 50])
  let failUntil = 2
  const attempts: number[] = []
  const w = worker(t, 'pgq-retry', async (event) => {
    attempts.push(event.attempt)
    if (event.attempt <= failUntil) throw new Error(`no luck on attempt ${event.attempt}`)
  }, { journal: { database: db.url, queue: 'postgres', pollIntervalMs: 20 } })
  await w.start()
  const retried = (await post({ n: 1 })).json.jobId
  await eventually('done on the third attempt', async () => (await row(retried))?.status === 'done')
  t.same(attempts, [1, 2, 3])
  const done = await row(retried)
  t.equal(done?.attempts, 3)
  const failures = await db.query<{ attempt: number }>('SELECT attempt FROM anvil.webhook_event_failures WHERE event_id = $1 ORDER BY attempt', [done?.id])
  t.same(failures.map((f) => f.attempt), [1, 2], 'each failed attempt is in the attempt log')

  failUntil = 99
  attempts.length = 0
  const doomed = (await post({ n: 2 })).json.jobId
  await eventually('dead', async () => (await row(doomed))?.status === 'dead')
  t.same(attempts, [1, 2, 3], 'three attempts, then dead')
  const dead = await row(doomed)
  t.equal(dead?.last_error, 'no luck on attempt 3')
  await eventually('the queue empty', async () => await queued() === 0)

  failUntil = 0
  attempts.length = 0
  const target = { db: openDatabase(db.url), queue: 'postgres' as const, retention: DEFAULT_RETENTION }
  t.teardown(async () => { await target.db.close() })
  const replayed = await replayEvent(target, dead?.id ?? '')
  t.equal(replayed.replayed, true)
  await eventually('done after the replay', async () => (await row(replayed.jobId ?? ''))?.status === 'done')
  t.same(attempts, [1], 'the replay ran it from its first attempt')
})
