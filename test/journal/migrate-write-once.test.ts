/**
 * Migration 0013 moves a journal of the old shape forward (one row per id, payload twice, done marks, the
 * attempt log a view of failures and marks): every row lands in its day's partition with its outcome, the log
 * reads as before, effects stay, a redelivered row keeps its diff, and a job that committed its `done` before
 * the migration is still refused a second one by the row.
 */
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadMigrations, migrate } from '../../src/db/migrate.js'
import { openDatabase } from '../../src/db/database.js'
import { getEvent } from '../../src/event-log/event-queries.js'
import { admits } from '../../src/sql/webhook-event-outcome.js'
import { TestDatabase } from '../helpers/pg.js'
import { beforeAll } from '../helpers/before-all.js'

const db = beforeAll(t, async () => await TestDatabase.create(), async (db) => await db.drop())
const DAY = 86_400_000

t.test('a journal of the 0012 shape, migrated forward', async (t) => {
  const shipped = loadMigrations()
  const dir = mkdtempSync(join(tmpdir(), 'anvil-migrations-'))
  for (const m of shipped.filter((m) => m.version <= '0012')) writeFileSync(join(dir, `${m.version}_${m.name}.sql`), m.sql)
  await migrate(db.url, { dir })
  const old = new Date(Math.floor(Date.now() / DAY) * DAY - 5 * DAY + 3_600_000)
  await db.query(`INSERT INTO anvil.webhook_events (id, source, provider, event_type, dedupe_key, payload, payload_json, received_at, status, attempts, job_id,
      last_error, error_class, processed_at, deliveries, previous_delivery, replay_generation) VALUES
    ('evt_done', 'stripe', 'stripe', 'invoice.paid', 'k_done', convert_to('{"amount":12}', 'UTF8'), '{"amount":12}', $1, 'done', 2, 'e_done', NULL, NULL, $1, 2,
      jsonb_build_object('payload', encode(convert_to('{"amount":10}', 'UTF8'), 'base64'), 'headers', '{}'::jsonb, 'receivedAt', $1::timestamptz, 'jobId', 'e_first'), 0),
    ('evt_dead', 'stripe', 'stripe', 'invoice.paid', 'k_dead', '\\x7b7d', '{}', now(), 'dead', 1, 'e_dead', 'boom', 'Error', NULL, 1, NULL, 0),
    ('evt_replayed', 'stripe', 'stripe', 'invoice.paid', 'k_rep', '\\x7b7d', '{}', $1, 'received', 0, 'r_j1_x', NULL, NULL, NULL, 1, NULL, 1)`, [old])
  await db.query(`INSERT INTO anvil.webhook_event_failures (event_id, attempt, status, error, error_class, job_id, finished_at) VALUES
    ('evt_done', 1, 'failed', 'no luck', 'Error', 'e_done', $1), ('evt_dead', 1, 'failed', 'boom', 'Error', 'e_dead', now())`, [old])
  await db.query(`INSERT INTO anvil.webhook_event_done (event_id, job_id, attempt, started_at, finished_at) VALUES
    ('evt_done', 'e_done', 2, $1, $2), ('evt_replayed', 'e_rep', 1, $1, $2)`, [old, new Date(old.getTime() + 1000)])
  await db.query("INSERT INTO anvil.webhook_effects (key, event_id, action, result) VALUES ('evt_done:charge', 'evt_done', 'charge', '{\"ok\":true}')")
  const log = 'SELECT event_id, attempt, status, error, job_id FROM anvil.webhook_event_attempts ORDER BY event_id, attempt, status'
  const was = await db.query(log)

  t.same((await migrate(db.url)).applied, shipped.filter((m) => m.version > '0012').map((m) => m.version))
  const day = old.toISOString().slice(0, 10).replaceAll('-', '')
  t.same((await db.query(`SELECT id FROM anvil.webhook_events_${day} ORDER BY id`)).map((r) => r.id), ['evt_done', 'evt_replayed'], 'rows in their day\'s partition')
  t.same(await db.query(log), was, 'the attempt log reads as before: failures, marks, and each done row')
  t.same(await db.query('SELECT key, event_id, result FROM anvil.webhook_effects'), [{ key: 'evt_done:charge', event_id: 'evt_done', result: { ok: true } }], 'effects stay')
  t.same(await db.query("SELECT status, attempts, job_id, started_at FROM anvil.webhook_events WHERE id = 'evt_done'"),
    [{ status: 'done', attempts: 2, job_id: 'e_done', started_at: old }], 'the outcome, with the done mark\'s start')

  const database = openDatabase(db.url)
  t.teardown(() => database.close())
  const detail = await getEvent(database, 'evt_done')
  t.match(detail, { status: 'done', json: { amount: 12 }, deliveries: 2, previousDelivery: { jobId: 'e_first', changes: [{ path: 'amount', before: 10, after: 12 }] } },
    'shown as before: its JSON view built on read, the previous delivery\'s diff')
  const admitted = async (id: string, at: Date, job: string): Promise<unknown> => (await db.query(admits('anvil'), [id, at, job]))[0]
  t.same(await admitted('evt_done', old, 'e_done'), { done: true, takes: false }, 'a job done before the migration is refused a second done')
  t.same(await admitted('evt_replayed', old, 'e_rep'), { done: false, takes: false }, 'a job a replay moved from is refused')
  t.same(await admitted('evt_replayed', old, 'r_j1_x'), { done: false, takes: true }, 'the replay\'s job runs')
})
