/**
 * Filters over the journal, replay of one event (once, whatever the
 * concurrency), bulk replay paced, cancelled and resumed over 10,000 failed events, dry runs, and retention.
 */
import t from 'tap'

import { openQueue, journalFixture } from '../helpers/journal.js'
import { openDatabase } from '../../src/db/database.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { pruneJournal } from '../../src/journal/retention.js'
import { eventually } from '../helpers/eventually.js'

const { redis, db } = journalFixture(t)

interface Seed { id: string, source?: string, provider?: string, type?: string, status?: string, errorClass?: string, receivedAt?: string, body?: string }

async function seed (...rows: Seed[]): Promise<void> {
  for (const r of rows) {
    const body = r.body ?? JSON.stringify({ id: r.id })
    await db.query(`INSERT INTO anvil.webhook_events (id, source, provider, event_type, dedupe_key, payload, headers, received_at, status, attempts, error_class, last_error, job_id, retry_schedule)
      VALUES ($1, $2, $3, $4, 'k_' || $1, convert_to($5, 'UTF8'), '{"x-test":"1"}', $6, $7, 3, $8, CASE WHEN $8::text IS NULL THEN NULL ELSE 'boom' END, 'e_' || $1, '{100}')`,
    [r.id, r.source ?? 'stripe', r.provider ?? 'stripe', r.type ?? 'invoice.paid', body, r.receivedAt ?? new Date().toISOString(), r.status ?? 'failed', r.errorClass ?? null])
  }
}

function logOn (queueName: string) {
  const log = openEventLog({ redis: redis.url, database: db.url, queueName })
  const queue = openQueue(redis.url, queueName)
  t.teardown(async () => {
    await log.close()
    await queue.close()
  })
  return { log, queue }
}

t.test('every filter, alone and together; newest first with cursor paging', async (t) => {
  const hour = 3_600_000
  const ago = (ms: number): string => new Date(Date.now() - ms).toISOString()
  await seed(
    { id: 'f1', provider: 'stripe', source: 'billing', type: 'invoice.paid', status: 'failed', errorClass: 'ECONNREFUSED', receivedAt: ago(5 * hour), body: '{"customer":"cus_alpha"}' },
    { id: 'f2', provider: 'github', source: 'repos', type: 'push', status: 'dead', errorClass: 'TypeError', receivedAt: ago(3 * hour), body: '{"ref":"main"}' },
    { id: 'f3', provider: 'stripe', source: 'billing', type: 'charge.failed', status: 'done', receivedAt: ago(1 * hour), body: '{"customer":"cus_beta"}' },
    { id: 'f4', provider: 'shopify', source: 'shop', type: 'orders/create', status: 'failed', errorClass: 'TypeError', receivedAt: ago(10 * 60_000), body: 'not json: cus_alpha' }
  )
  const { log } = logOn('filters')
  const ids = async (filter: object): Promise<string[]> => (await log.list(filter)).items.map((i) => i.id)
  t.same(await ids({}), ['f4', 'f3', 'f2', 'f1'], 'newest first')
  t.same(await ids({ provider: 'stripe' }), ['f3', 'f1'])
  t.same(await ids({ source: 'repos' }), ['f2'])
  t.same(await ids({ type: 'charge.failed' }), ['f3'])
  t.same(await ids({ status: 'done' }), ['f3'])
  t.same(await ids({ status: 'failed' }), ['f4', 'f1'])
  t.same(await ids({ status: 'processing' }), [])
  t.same(await ids({ status: 'failed,dead' }), ['f4', 'f2', 'f1'])
  t.same(await ids({ errorClass: 'TypeError' }), ['f4', 'f2'])
  t.same(await ids({ since: '2h' }), ['f4', 'f3'])
  t.same(await ids({ until: '2h' }), ['f2', 'f1'])
  t.same(await ids({ since: ago(4 * hour), until: ago(30 * 60_000) }), ['f3', 'f2'], 'ISO times')
  t.same(await ids({ text: 'cus_alpha' }), ['f4', 'f1'], 'a text match on the payload, JSON or not')
  t.same(await ids({ provider: 'stripe', text: 'cus_alpha', status: 'failed' }), ['f1'])
  t.equal(await log.count({ provider: 'stripe' }), 2, 'a dry run counts what a replay would take')
  await db.query("UPDATE anvil.webhook_events SET status = 'processing' WHERE id = 'f3'")
  t.equal(await log.count({ provider: 'stripe' }), 1, 'not an event already running')

  const first = await log.list({}, { limit: 3 })
  t.same(first.items.map((i) => i.id), ['f4', 'f3', 'f2'])
  t.type(first.next, 'string')
  const second = await log.list({}, { limit: 3, cursor: first.next ?? '' })
  t.same(second.items.map((i) => i.id), ['f1'])
  t.equal(second.next, null)
  t.same(first.items[2], { id: 'f2', source: 'repos', provider: 'github', eventType: 'push', status: 'dead', attempts: 3, receivedAt: first.items[2]?.receivedAt, lastError: 'boom', errorClass: 'TypeError' }, 'the item shape scripts rely on')

  await t.rejects(log.list({ status: 'broken' }), { code: 'ANVIL_ERR_INVALID_FILTER', message: /status must be one of received, processing, done, failed, dead/ })
  await t.rejects(log.list({ since: 'yesterday' }), { code: 'ANVIL_ERR_INVALID_FILTER', message: /since must be an ISO 8601 time .* \(got "yesterday"\)/ })
  await t.rejects(log.list({ since: '1h', until: '2h' }), { code: 'ANVIL_ERR_INVALID_FILTER', message: /since must be before until/ })
  await t.rejects(log.list({ colour: 'red' }), { code: 'ANVIL_ERR_INVALID_FILTER', message: /colour/ })
  await t.rejects(log.list({}, { cursor: 'garbage' }), { code: 'ANVIL_ERR_BAD_REQUEST' })
  await db.query("DELETE FROM anvil.webhook_events WHERE id LIKE 'f_'")
})

t.test('one event replayed 10 times at once makes one job; its row is received with 0 attempts', async (t) => {
  await seed({ id: 'evt_once', status: 'dead', errorClass: 'TypeError' })
  const { log, queue } = logOn('replay-one')
  const results = await Promise.all(Array.from({ length: 10 }, async () => await log.replay('evt_once')))
  t.equal(results.filter((r) => r.replayed).length, 1, 'one replay says it replayed')
  t.equal(new Set(results.map((r) => r.jobId)).size, 1, 'all name the same job')
  t.equal(await queue.count(), 1, 'one job in the queue')
  const [job] = await queue.getJobs(['wait'])
  t.equal(job?.data.eventId, 'evt_once')
  t.equal(job?.opts.attempts, 2, 'a fresh budget from the event\'s own schedule')
  const [row] = await db.query('SELECT status, attempts, replay_generation FROM anvil.webhook_events WHERE id = $1', ['evt_once'])
  t.same(row, { status: 'received', attempts: 0, replay_generation: 1 })
  t.same(await log.replay('evt_once'), { id: 'evt_once', jobId: results[0]?.jobId, replayed: false }, 'while queued, a replay adds nothing')
  await t.rejects(log.replay('evt_missing'), { code: 'ANVIL_ERR_EVENT_NOT_FOUND' })
})

t.test('bulk replay of 10,000 failed events at a set rate: cancel, then resume; each event replayed once', async (t) => {
  await db.query(`INSERT INTO anvil.webhook_events (id, source, provider, event_type, dedupe_key, payload, received_at, status, attempts, error_class, job_id)
    SELECT 'bulk_' || n, 'stripe', 'stripe', 'invoice.paid', 'kb_' || n, convert_to('{"n":' || n || '}', 'UTF8'),
      now() - make_interval(secs => n % 100), 'failed', 3, 'ETIMEDOUT', 'e_bulk_' || n FROM generate_series(1, 10000) AS n`)
  const { log, queue } = logOn('replay-bulk')
  const filter = { status: 'failed', errorClass: 'ETIMEDOUT' }
  t.equal(await log.count(filter), 10000, 'the dry run')
  // 5,000 a second: pages of 200 every 40 ms, 2 s for the run; a cancel after the first 1,000 still lands part way.
  const { id, matched } = await log.startReplay(filter, 5000)
  t.equal(matched, 10000)
  await eventually('some progress', async () => (await log.replayStatus(id)).replayed >= 1000, 30_000)
  const cancelled = await log.cancelReplay(id)
  t.equal(cancelled.state, 'cancelled')
  t.ok(cancelled.replayed > 0 && cancelled.replayed < 10000, `cancelled part way (${cancelled.replayed})`)
  t.equal(await queue.count(), cancelled.replayed, 'as many jobs as the run says it replayed')
  const later = await log.replayStatus(id)
  t.equal(later.replayed, cancelled.replayed, 'nothing more after the cancel')

  const resumed = await log.resumeReplay(id)
  t.equal(resumed.state, 'running')
  const done = await log.waitReplay(id)
  t.same(done, { id, matched: 10000, replayed: 10000, state: 'done' })
  t.equal(await queue.count(), 10000, 'one job per event')
  const [gens] = await db.query<{ min: number, max: number, received: string }>(
    "SELECT min(replay_generation) AS min, max(replay_generation) AS max, count(*) FILTER (WHERE status = 'received') AS received FROM anvil.webhook_events WHERE id LIKE 'bulk_%'")
  t.same(gens, { min: 1, max: 1, received: '10000' }, 'every event replayed exactly once')
  t.equal(await log.count(filter), 0, 'nothing left to replay')
  await db.query("DELETE FROM anvil.webhook_events WHERE id LIKE 'bulk_%'")
})

t.test('retention deletes the DEFAULT partition\'s old rows in batches and effects as old; recent rows stay', async (t) => {
  // Days the migration made no partition for: the rows are in the DEFAULT partition, the safety net.
  await seed({ id: 'old_1', receivedAt: new Date(Date.now() - 40 * 86_400_000).toISOString() },
    { id: 'old_2', receivedAt: new Date(Date.now() - 31 * 86_400_000).toISOString() },
    { id: 'new_1', receivedAt: new Date(Date.now() - 29 * 86_400_000).toISOString() })
  await db.query(`INSERT INTO anvil.webhook_effects (key, event_id, action, created_at) VALUES ('old_1:charge', 'old_1', 'charge', now() - interval '40 days'),
    ('new_1:charge', 'new_1', 'charge', now() - interval '29 days')`)
  const database = openDatabase(db.url)
  t.teardown(() => database.close())
  t.match(await pruneJournal(database, 30, new Date(), 1), { deleted: 3 }, 'two rows and an effect, one per batch')
  const left = await db.query<{ id: string }>("SELECT id FROM anvil.webhook_events WHERE id IN ('old_1', 'old_2', 'new_1')")
  t.same(left.map((r) => r.id), ['new_1'])
  t.same((await db.query<{ key: string }>('SELECT key FROM anvil.webhook_effects')).map((r) => r.key), ['new_1:charge'], 'the old effect went')
  t.same(await pruneJournal(database, 0), { dropped: [], deleted: 0 }, '0 keeps everything')
  await db.query("DELETE FROM anvil.webhook_events WHERE id = 'new_1'")
})
