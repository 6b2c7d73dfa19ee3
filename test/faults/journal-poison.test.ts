/**
 * One value PostgreSQL refuses does not take its batch down. A validly signed body nested 50,000 deep (jsonb's
 * parser gives up on it) sent among normal events through the real ingress, run by a real worker with the
 * journal: every event ends with its row and is handled once, the deep one stored with its bytes and shown with
 * no JSON view (the view is built on read; the bytes are the one copy). A body jsonb would refuse (a number past
 * numeric's range) is stored as it came, its batch never failed. Text from outside with a NUL byte (a header,
 * an error message) is stored too.
 */
import t from 'tap'

import { buildApp, signed } from '../helpers/app.js'
import { addJob, jobData, journalFixture, openQueue } from '../helpers/journal.js'
import { createWorker, type WebhookHandler } from '../../src/worker/worker.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { deadLetterQueueName } from '../../src/queue/open-queues.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const NORMAL = 200
const DEPTH = 50_000

const { redis, db } = journalFixture(t)
beforeStep(t, async () => { await db.query('CREATE TABLE public.handled (n integer NOT NULL)') })

interface Row { id: string, status: string, payload: Buffer, headers: Record<string, string> }

function start (queueName: string, handler: WebhookHandler) {
  const worker = createWorker(handler, { redis: redis.url, queueName, sweepIntervalMs: 0, concurrency: 32, journal: { database: db.url } })
  const queue = openQueue(redis.url, queueName)
  t.teardown(async () => {
    await worker.close()
    await queue.close()
  })
  return { worker, queue }
}

/** Every job completed or failed for good (they were all queued before the worker started). */
async function settled (queue: ReturnType<typeof openQueue>): Promise<void> {
  await eventually('every job to settle', async () => {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
    return Object.values(counts).every((n) => n === 0)
  }, 40_000)
}

t.test(`a body nested ${DEPTH} deep among ${NORMAL} events: stored without its JSON view, the others never notice`, async (t) => {
  const queueName = 'faults-journal-poison'
  const app = await buildApp(redis.url, { queueName, retrySchedule: [100, 100] })
  t.teardown(() => app.close())
  const poison = Buffer.from('['.repeat(DEPTH) + ']'.repeat(DEPTH))
  const bodies = Array.from({ length: NORMAL }, (_, n) => Buffer.from(JSON.stringify({ type: 'test.poison', n })))
  bodies.splice(NORMAL / 2, 0, poison)
  // All queued before the worker starts, so the deep one shares its batch with others.
  const answers = await Promise.all(bodies.map(async (body) => (await app.inject(signed(body))).statusCode))
  t.same(answers.filter((status) => status !== 202), [], 'every body got a 202')

  const { worker, queue } = start(queueName, async (event) => {
    const body = event.json<{ n?: number }>()
    await event.db?.query('INSERT INTO public.handled (n) VALUES ($1)', [Array.isArray(body) ? -1 : body.n])
  })
  await worker.start()
  await settled(queue)

  const handled = await db.query<{ n: number, runs: number }>('SELECT n, count(*)::int AS runs FROM public.handled GROUP BY n ORDER BY n')
  t.same(handled, [{ n: -1, runs: 1 }, ...Array.from({ length: NORMAL }, (_, n) => ({ n, runs: 1 }))], 'every event handled once, the deep one too')
  const rows = await db.query<Row>('SELECT id, status, payload, headers FROM anvil.webhook_events')
  t.equal(rows.length, NORMAL + 1, 'one row per event')
  t.same(rows.filter((row) => row.status !== 'done').map((row) => row.id), [], 'every row done')
  const viewless = rows.filter((row) => row.payload.equals(poison))
  t.equal(viewless.length, 1, 'the deep body\'s bytes are kept, byte for byte')
  const dead = openQueue(redis.url, deadLetterQueueName(queueName))
  t.teardown(() => dead.close())
  t.equal(await dead.count(), 0, 'nothing dead-lettered')

  // The journal's views of a row without a JSON view: show, list by text and status, count, stats.
  const log = openEventLog({ redis: redis.url, database: db.url, queueName })
  t.teardown(() => log.close())
  const id = viewless[0]?.id as string
  const shown = await log.get(id)
  t.equal(shown.json, undefined, 'shown without json')
  const normal = rows.find((row) => row !== viewless[0]) as Row
  t.same((await log.get(normal.id)).json, JSON.parse(normal.payload.toString('utf8')), 'a normal body is shown with its JSON view, built on read')
  t.equal(shown.payload, poison.toString('utf8'), 'and with its payload')
  t.same((await log.list({ text: '[[[[', status: 'done' })).items.map((item) => item.id), [id], 'found by the bytes it contains')
  t.equal(await log.count({ status: 'done' }), NORMAL + 1, 'counted with the others')
  t.ok((await log.stats(3_600_000)) !== undefined, 'stats answer')
})

t.test('a NUL byte (and a lone surrogate) in a header or an error message is stored; the batch around it is not failed', async (t) => {
  const { worker, queue } = start('faults-journal-nul', async (event) => {
    if (event.eventId === 'evt_nul' && event.attempt === 1) throw new Error('refused \u0000 by the API')
    await event.db?.query('INSERT INTO public.handled (n) VALUES ($1)', [event.json<{ n: number }>().n])
  })
  await db.query('DELETE FROM public.handled')
  await db.query('DELETE FROM anvil.webhook_events')
  const headers = { 'content-type': 'application/json', 'x-note': 'a\u0000b', 'x-odd': 'x\ud800y' }
  await addJob(queue, jobData({ eventId: 'evt_nul', headers, body: { n: 1000 }, retry: [50] }))
  for (let n = 0; n < 20; n++) await addJob(queue, jobData({ eventId: `evt_beside_${n}`, body: { n } }))
  await worker.start()
  await settled(queue)

  const [row] = await db.query<Row>("SELECT id, status, payload, headers FROM anvil.webhook_events WHERE id = 'evt_nul'")
  t.equal(row?.status, 'done')
  t.same(row?.headers, { 'content-type': 'application/json', 'x-note': 'ab', 'x-odd': 'x\ufffdy' }, 'the headers stored, NUL dropped, the lone surrogate replaced')
  const attempts = await db.query<{ status: string, error: string | null }>("SELECT status, error FROM anvil.webhook_event_attempts WHERE event_id = 'evt_nul' ORDER BY attempt")
  t.same(attempts, [{ status: 'failed', error: 'refused  by the API' }, { status: 'done', error: null }], 'the error message stored without its NUL')
  const [handled] = await db.query<{ n: string }>('SELECT count(*) AS n FROM public.handled')
  t.equal(Number(handled?.n), 21, 'every event handled')
})

t.test('a body jsonb would refuse (a number past numeric\'s range) among 100 events: stored as it came, its batch never failed', async (t) => {
  const queueName = 'faults-journal-overflow'
  await db.query('DELETE FROM public.handled')
  await db.query('DELETE FROM anvil.webhook_events')
  const app = await buildApp(redis.url, { queueName, retrySchedule: [100, 100] })
  t.teardown(() => app.close())
  // Valid JSON for JSON.parse (Infinity), and no depth or \u0000: only PostgreSQL's jsonb says no (22003).
  const overflow = Buffer.from('{"type":"test.overflow","n":-1,"big":1e1000000}')
  const bodies = Array.from({ length: 100 }, (_, n) => Buffer.from(JSON.stringify({ type: 'test.overflow', n })))
  bodies.splice(50, 0, overflow)
  const answers = await Promise.all(bodies.map(async (body) => (await app.inject(signed(body))).statusCode))
  t.same(answers.filter((status) => status !== 202), [], 'every body got a 202')

  const { worker, queue } = start(queueName, async (event) => {
    await event.db?.query('INSERT INTO public.handled (n) VALUES ($1)', [event.json<{ n: number }>().n])
  })
  await worker.start()
  await settled(queue)
  const handled = await db.query<{ n: number, runs: number }>('SELECT n, count(*)::int AS runs FROM public.handled GROUP BY n ORDER BY n')
  t.same(handled, [{ n: -1, runs: 1 }, ...Array.from({ length: 100 }, (_, n) => ({ n, runs: 1 }))], 'every event handled once, the refused one too')
  const rows = await db.query<Row>('SELECT id, status, payload, headers FROM anvil.webhook_events')
  t.equal(rows.length, 101, 'one row per event')
  t.same(rows.filter((row) => row.status !== 'done').map((row) => row.id), [], 'every row done')
  t.equal(rows.filter((row) => row.payload.equals(overflow)).length, 1, 'its bytes are kept, byte for byte')
  const dead = openQueue(redis.url, deadLetterQueueName(queueName))
  t.teardown(() => dead.close())
  t.equal(await dead.count(), 0, 'nothing dead-lettered')
})
