/**
 * The delivery log partitioned by day (migration 0028) over a month of simulated time (the clock is given, nothing
 * sleeps): each retention pass makes the days ahead before attempts come, drops the days past the age whole (no
 * row deleted one by one), and an attempt is found by its id in its day. Migration 0028 moves a log of the 0027
 * shape forward: every row in its day, its id kept and still found.
 */
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TestDatabase } from '../helpers/pg.js'
import { beforeAll } from '../helpers/before-all.js'
import { openDatabase } from '../../src/db/database.js'
import { loadMigrations, migrate } from '../../src/db/migrate.js'
import { createDeliveryLog } from '../../src/delivery-log/delivery-log.js'
import { DEFAULT_DELETE_BATCH } from '../../src/db/batched-delete.js'
import { DELIVERY_LOG_DAYS_AHEAD, deleteIdleMessages, idleSeconds } from '../../src/outbox/outbox-retention.js'

const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())
const pool = beforeAll(t, async () => db.pool(2), async () => {})
const DAY = 86_400_000
const RETENTION = 10
/** The simulated month starts well after today, so the migration's own days are all in the past by then. */
const START = new Date(Math.floor(Date.now() / DAY) * DAY + 100 * DAY + 9 * 3_600_000)

const stamp = (time: number): string => new Date(time).toISOString().slice(0, 10).replaceAll('-', '')
const days = async (): Promise<string[]> => (await db.query<{ name: string }>(
  "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'anvil.deliveries'::regclass ORDER BY 1"))
  .map((row) => row.name).filter((name) => /_\d{8}$/.test(name) && name >= `deliveries_${stamp(START.getTime())}`)

/** An attempt as the delivery worker writes it, at `at`; its id back. */
async function attempt (message: string, at: Date): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(`INSERT INTO anvil.deliveries (message_id, endpoint_id, attempt, status, duration_ms, payload_sha256, created_at,
      message_created_at) VALUES ($1, 'ep_1', 1, 'failed', 5, 'x', $2, $2) RETURNING id`, [message, at])
  return rows[0]?.id ?? ''
}

t.test('a month of days: made ahead, dropped whole past the age, each attempt found by its id', async (t) => {
  t.ok(idleSeconds(RETENTION) === RETENTION * 86_400, 'the age is above the floor: the log keeps exactly its days')
  const database = openDatabase(db.url)
  t.teardown(() => database.close())
  const log = createDeliveryLog(database)
  const ids = new Map<string, Date>()
  let now = START
  for (let n = 0; n < 31; n++) {
    now = new Date(START.getTime() + n * DAY)
    const pass = await deleteIdleMessages(database, RETENTION, DEFAULT_DELETE_BATCH, now)
    t.equal(pass.deliveries, 0, `day ${n}: nothing deleted row by row`)
    if (n > RETENTION) t.same(pass.days, [`deliveries_${stamp(now.getTime() - (RETENTION + 1) * DAY)}`], `day ${n}: the day past the age dropped`)
    for (let hour = 0; hour < 24; hour += 8) {
      const at = new Date(now.getTime() + hour * 3_600_000 - 9 * 3_600_000)
      ids.set(await attempt(`msg_${n}_${hour}`, at), at)
    }
    const { rows: [fallback] } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM anvil.deliveries_default')
    t.equal(Number(fallback?.n), 0, `day ${n}: every attempt in its day`)
  }
  // Today, the age's days before it (the oldest whole day goes once all of it is past), and the days ahead.
  t.same(await days(), Array.from({ length: RETENTION + 1 + DELIVERY_LOG_DAYS_AHEAD }, (_, k) => `deliveries_${stamp(now.getTime() + (k - RETENTION) * DAY)}`))
  const kept = [...ids].filter(([, at]) => at.getTime() >= now.getTime() - RETENTION * DAY - 9 * 3_600_000)
  const [left] = await db.query<{ n: string }>("SELECT count(*) AS n FROM anvil.deliveries WHERE message_id LIKE 'msg\\_%'")
  t.equal(Number(left?.n), kept.length, 'the attempts of the dropped days are gone, the others kept')
  for (const [id, at] of kept.filter((_, k) => k % 5 === 0)) t.match(await log.get(id), { id, createdAt: at.toISOString() }, `attempt ${id} by its id`)
  const [gone] = [...ids].filter(([, at]) => at.getTime() < now.getTime() - (RETENTION + 1) * DAY)
  await t.rejects(log.get(gone?.[0] ?? ''), { code: 'ANVIL_ERR_NOT_FOUND' }, 'one of a dropped day is not found')
})

t.test('an attempt of a day made late waits in the DEFAULT partition, moves into its day, and is still found by its id', async (t) => {
  const database = openDatabase(db.url)
  t.teardown(() => database.close())
  const later = new Date(START.getTime() + 80 * DAY)
  const id = await attempt('msg_early', later)
  t.same(await db.query('SELECT message_id FROM anvil.deliveries_default'), [{ message_id: 'msg_early' }], 'no day for it yet')
  t.match(await createDeliveryLog(database).get(id), { id, messageId: 'msg_early' }, 'found there by its id')
  await deleteIdleMessages(database, 0, DEFAULT_DELETE_BATCH, new Date(later.getTime() - DELIVERY_LOG_DAYS_AHEAD * DAY))
  t.same(await db.query('SELECT message_id FROM anvil.deliveries_default'), [], 'moved out of the DEFAULT partition by a pass that keeps everything')
  t.same(await db.query(`SELECT message_id FROM anvil.deliveries_${stamp(later.getTime())}`), [{ message_id: 'msg_early' }], 'into its day')
  t.match(await createDeliveryLog(database).get(id), { id, messageId: 'msg_early' }, 'and found by its id as before')
})

t.test('migration 0028 moves a log of the 0027 shape into its days, each row keeping its id', async (t) => {
  const before = await TestDatabase.create()
  t.teardown(async () => await before.drop())
  const dir = mkdtempSync(join(tmpdir(), 'anvil-migrations-'))
  for (const m of loadMigrations().filter((m) => m.version <= '0027')) writeFileSync(join(dir, `${m.version}_${m.name}.sql`), m.sql)
  await migrate(before.url, { dir })
  const old = new Date(Math.floor(Date.now() / DAY) * DAY - 5 * DAY + 3_600_000)
  await before.query(`INSERT INTO anvil.deliveries (message_id, endpoint_id, attempt, status, http_status, duration_ms, payload_sha256, created_at, job_id, resolved,
      request_headers, job_stalls, message_created_at, message_tenant, message_type) VALUES
    ('m1', 'e1', 1, 'failed', 500, 3, 'sha', $1, 'j1', true, '{"a":"b"}', 1, $1, 't1', 'order.paid'),
    ('m1', 'e1', 2, 'success', 200, 4, 'sha', now(), 'j1', false, NULL, NULL, $1, 't1', 'order.paid')`, [old])
  const was = await before.query('SELECT * FROM anvil.deliveries ORDER BY id')
  await migrate(before.url)
  t.same(await before.query('SELECT * FROM anvil.deliveries ORDER BY id'), was, 'every column of every row as it was')
  t.same(await before.query(`SELECT id FROM anvil.deliveries_${stamp(old.getTime())}`), [{ id: was[0]?.id }], 'in its day\'s partition')
  const database = openDatabase(before.url)
  t.teardown(() => database.close())
  const log = createDeliveryLog(database)
  for (const row of was) t.match(await log.get(String(row.id)), { id: String(row.id), messageId: 'm1' }, `row ${String(row.id)} found by the id it had`)
  const [fresh] = await before.query<{ id: string }>(`INSERT INTO anvil.deliveries (message_id, endpoint_id, attempt, status, duration_ms, payload_sha256)
    VALUES ('m2', 'e1', 1, 'started', 0, 'sha') RETURNING id`)
  t.ok(BigInt(fresh?.id ?? 0) > BigInt(String(was[1]?.id)), 'a new attempt\'s id comes after the moved ones')
  t.same((await log.list({})).items.map((item) => item.messageId), ['m2', 'm1', 'm1'], 'the list newest first across both')
})
