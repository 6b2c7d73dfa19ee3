/**
 * The journal's tables partitioned by day (migration 0013) over a month of simulated time (the clock is given,
 * nothing sleeps): each retention pass makes the days ahead before rows come, drops the days past retention
 * (rows and attempt logs together, no row deleted one by one), and moves rows that fell into the DEFAULT
 * partition (a day made late) into their day.
 */
import t from 'tap'
import { TestDatabase } from '../helpers/pg.js'
import { beforeAll } from '../helpers/before-all.js'
import { openDatabase } from '../../src/db/database.js'
import { pruneJournal, JOURNAL_DAYS_AHEAD } from '../../src/journal/retention.js'

const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
/** One pool for the file's own statements (the helper's query opens a connection each time). */
const pool = beforeAll(t, async () => db.pool(2), async () => {})
const DAY = 86_400_000
const RETENTION = 7
/** The simulated month starts well after today, so the migration's own days are all in the past by then. */
const START = new Date(Math.floor(Date.now() / DAY) * DAY + 100 * DAY + 9 * 3_600_000)

const days = async (table: string): Promise<string[]> => (await db.query<{ name: string }>(
  `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`, [`anvil.${table}`]))
  .map((row) => row.name)
const stamp = (time: number): string => new Date(time).toISOString().slice(0, 10).replaceAll('-', '')

async function receive (id: string, at: Date): Promise<void> {
  await pool.query(`INSERT INTO anvil.webhook_events (id, source, dedupe_key, payload, received_at, status, job_id) VALUES ($1, 'stripe', $1, '\\x7b7d', $2, 'failed', 'e_' || $1)`, [id, at])
  await pool.query(`INSERT INTO anvil.webhook_event_failures (event_id, event_received_at, attempt, status, error) VALUES ($1, $2, 1, 'failed', 'boom')`, [id, at])
}

t.test('a month of days: made ahead, dropped past retention, rows and logs kept exactly for the retention', async (t) => {
  const database = openDatabase(db.url)
  t.teardown(() => database.close())
  let droppedRows = 0
  for (let n = 0; n < 31; n++) {
    const now = new Date(START.getTime() + n * DAY)
    const pass = await pruneJournal(database, RETENTION, now)
    t.equal(pass.deleted, 0, `day ${n}: nothing deleted row by row`)
    // The partitions that follow are there before the rows: none falls into the DEFAULT partition.
    for (let hour = 0; hour < 24; hour += 8) await receive(`evt_${n}_${hour}`, new Date(now.getTime() + hour * 3_600_000 - 9 * 3_600_000))
    const { rows: [fallback] } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM anvil.webhook_events_default')
    t.equal(Number(fallback?.n), 0, `day ${n}: every row in its day`)
    if (n < 31 - 1) continue
    const events = (await days('webhook_events')).filter((name) => /_\d{8}$/.test(name))
    const kept = events.filter((name) => name >= `webhook_events_${stamp(START.getTime())}`)
    // Today, the retention's days before it (the oldest whole day goes once all of it is past), and the days ahead.
    t.same(kept, Array.from({ length: RETENTION + 1 + JOURNAL_DAYS_AHEAD }, (_, k) => `webhook_events_${stamp(now.getTime() + (k - RETENTION) * DAY)}`))
    t.same((await days('webhook_event_failures')).filter((name) => /_\d{8}$/.test(name) && name >= `webhook_event_failures_${stamp(START.getTime())}`),
      kept.map((name) => name.replace('webhook_events', 'webhook_event_failures')), 'the attempt log has the same days')
    droppedRows = 3 * (31 - RETENTION - 1)
  }
  const [left] = await db.query<{ events: string, logs: string, oldest: Date }>(
    "SELECT count(*) AS events, (SELECT count(*) FROM anvil.webhook_event_failures WHERE event_id LIKE 'evt_%') AS logs, min(received_at) AS oldest FROM anvil.webhook_events WHERE id LIKE 'evt_%'")
  t.equal(Number(left?.events), 31 * 3 - droppedRows, 'the rows of the dropped days are gone, the others kept')
  t.equal(Number(left?.logs), Number(left?.events), 'each kept row keeps its attempt log, each dropped one lost it')
  const last = START.getTime() + 30 * DAY
  t.ok((left?.oldest.getTime() ?? 0) >= last - (RETENTION + 1) * DAY, 'nothing older than the retention and a day')
})

t.test('rows of a day made late wait in the DEFAULT partition and move into their day when it is made', async (t) => {
  const database = openDatabase(db.url)
  t.teardown(() => database.close())
  const now = new Date(START.getTime() + 60 * DAY)
  const later = new Date(now.getTime() + 10 * DAY)
  await receive('evt_early', later)
  t.same(await db.query('SELECT id FROM anvil.webhook_events_default'), [{ id: 'evt_early' }], 'no day for it yet')
  await pruneJournal(database, 0, new Date(later.getTime() - JOURNAL_DAYS_AHEAD * DAY))
  t.same(await db.query('SELECT id FROM anvil.webhook_events_default'), [], 'moved out of the DEFAULT partition')
  t.same(await db.query(`SELECT id FROM anvil.webhook_events_${stamp(later.getTime())}`), [{ id: 'evt_early' }], 'into its day')
  t.same(await db.query(`SELECT event_id FROM anvil.webhook_event_failures_${stamp(later.getTime())}`), [{ event_id: 'evt_early' }], 'its attempt log too')
  t.same(await db.query("SELECT id, status FROM anvil.webhook_events WHERE id = 'evt_early'"), [{ id: 'evt_early', status: 'failed' }], 'and read as before')
})

t.test('workers prune at once: each day is made once, without an error; a day a long transaction holds waits for the next pass', async (t) => {
  const databases = Array.from({ length: 4 }, () => openDatabase(db.url))
  t.teardown(async () => { for (const database of databases) await database.close() })
  const now = new Date(START.getTime() + 200 * DAY)
  await Promise.all(databases.map(async (database) => await pruneJournal(database, RETENTION, now)))
  const made = (await days('webhook_events')).filter((name) => /_\d{8}$/.test(name) && name >= `webhook_events_${stamp(now.getTime())}`)
  t.same(made, Array.from({ length: JOURNAL_DAYS_AHEAD + 1 }, (_, k) => `webhook_events_${stamp(now.getTime() + k * DAY)}`), 'the days ahead, once each')

  // A reader holds the table: the drop of an expired day gives up after its lock timeout, and is not an error.
  const later = new Date(now.getTime() + (RETENTION + 1) * DAY)
  // All but the last of that pass's days ahead made first (retention 0 drops nothing): each partition the held
  // pass touches waits out the lock timeout (2 s), and one create and one drop show both give up without an error.
  await pruneJournal(databases[1] as ReturnType<typeof openDatabase>, 0, new Date(later.getTime() - DAY))
  const reader = databases[0] as ReturnType<typeof openDatabase>
  const client = await reader.pool.connect()
  await client.query('BEGIN; LOCK TABLE anvil.webhook_events IN ACCESS SHARE MODE')
  const held = await pruneJournal(databases[1] as ReturnType<typeof openDatabase>, RETENTION, later)
  t.notOk(held.dropped.includes(`webhook_events_${stamp(now.getTime())}`), 'not dropped while held')
  await client.query('COMMIT')
  client.release()
  const next = await pruneJournal(databases[1] as ReturnType<typeof openDatabase>, RETENTION, later)
  t.ok(next.dropped.includes(`webhook_events_${stamp(now.getTime())}`), 'dropped by the next pass')
})
