import t from 'tap'
import { createHash } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadMigrations, migrate } from '../../src/db/migrate.js'
import { openDatabase } from '../../src/db/database.js'
import { TestDatabase } from '../helpers/pg.js'
import { beforeAll } from '../helpers/before-all.js'

const db = beforeAll(t, async () => await TestDatabase.create(), async (db) => await db.drop())

function migrationsIn (files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-migrations-'))
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql)
  return dir
}

const two = migrationsIn({
  '0001_first.sql': 'CREATE TABLE {{schema}}.things (id text PRIMARY KEY);',
  '0002_second.sql': 'ALTER TABLE {{schema}}.things ADD COLUMN size int NOT NULL DEFAULT 0;',
  'notes.txt': 'not a migration'
})

t.test('applies each migration once, in order, in the schema it is given', async (t) => {
  const first = await migrate(db.url, { schema: 'first_run', dir: two })
  t.same(first, { applied: ['0001', '0002'], current: ['0001', '0002'] })
  const again = await migrate(db.url, { schema: 'first_run', dir: two })
  t.same(again, { applied: [], current: ['0001', '0002'] }, 'a second run applies nothing')
  const columns = await db.query<{ column_name: string }>(
    "SELECT column_name FROM information_schema.columns WHERE table_schema = 'first_run' AND table_name = 'things' ORDER BY column_name")
  t.same(columns.map((c) => c.column_name), ['id', 'size'])
  const record = await db.query<{ version: string }>('SELECT version FROM first_run.schema_migrations ORDER BY version')
  t.same(record.map((r) => r.version), ['0001', '0002'])
})

t.test('processes that migrate at once apply each version once', async (t) => {
  const pools = [db.pool(), db.pool(), db.pool(), db.pool()]
  const results = await Promise.all(pools.map(async (pool) => await migrate(pool, { schema: 'racing', dir: two })))
  t.same(results.flatMap((r) => r.applied).sort(), ['0001', '0002'], 'every version applied by exactly one caller')
  const rows = await db.query<{ n: string }>('SELECT count(*) AS n FROM racing.schema_migrations')
  t.equal(Number(rows[0]?.n), 2)
  // A pool that was given is left open.
  t.same((await pools[0]!.query('SELECT 1 AS one')).rows, [{ one: 1 }])
})

t.test('a migration changed after it was applied is refused, and nothing of the run is kept', async (t) => {
  await migrate(db.url, { schema: 'changed', dir: migrationsIn({ '0001_first.sql': 'CREATE TABLE {{schema}}.a (id int);' }) })
  const edited = migrationsIn({
    '0001_first.sql': 'CREATE TABLE {{schema}}.a (id bigint);',
    '0002_more.sql': 'CREATE TABLE {{schema}}.b (id int);'
  })
  await t.rejects(migrate(db.url, { schema: 'changed', dir: edited }), { code: 'ANVIL_ERR_MIGRATION_CHANGED', message: /0001_first/ })
  const tables = await db.query("SELECT 1 FROM information_schema.tables WHERE table_schema = 'changed' AND table_name = 'b'")
  t.equal(tables.length, 0, 'the later migration was not applied')
})

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

t.test('editing a comment is no change; a changed statement still is', async (t) => {
  const schema = 'commented'
  await migrate(db.url, { schema, dir: migrationsIn({ '0001_first.sql': '-- The first table.\nCREATE TABLE {{schema}}.a (id int);\n' }) })
  const reworded = migrationsIn({ '0001_first.sql': '-- The first table, said otherwise.\n\n-- And a second line.\nCREATE TABLE {{schema}}.a (id int);\n' })
  t.same(await migrate(db.url, { schema, dir: reworded }), { applied: [], current: ['0001'] }, 'comments and blank lines edited: accepted')
  const changed = migrationsIn({ '0001_first.sql': '-- The first table.\nCREATE TABLE {{schema}}.a (id bigint);\n' })
  await t.rejects(migrate(db.url, { schema, dir: changed }), { code: 'ANVIL_ERR_MIGRATION_CHANGED', message: /0001_first/ })
})

t.test('two migrations of one version are refused before anything is applied, naming the version', async (t) => {
  const dir = migrationsIn({ '0001_first.sql': 'CREATE TABLE {{schema}}.a (id int);\n', '0001_second.sql': 'CREATE TABLE {{schema}}.b (id int);\n' })
  t.throws(() => loadMigrations(dir), { code: 'ANVIL_ERR_INVALID_CONFIG', message: /two migrations share version 0001/ })
  await t.rejects(migrate(db.url, { schema: 'twice', dir }), { code: 'ANVIL_ERR_INVALID_CONFIG' })
  const tables = await db.query("SELECT 1 FROM information_schema.tables WHERE table_schema = 'twice'")
  t.equal(tables.length, 0, 'nothing was applied')
  t.same(new Set(loadMigrations().map((m) => m.version)).size, loadMigrations().length, 'the shipped migrations have one file a version')
})

t.test('a whole-file checksum an earlier build recorded is accepted and rewritten; another is refused', async (t) => {
  const schema = 'earlier_form'
  const text = '-- The first table.\nCREATE TABLE {{schema}}.a (id int);\n'
  const dir = migrationsIn({ '0001_first.sql': text })
  await migrate(db.url, { schema, dir })
  await db.query(`UPDATE ${schema}.schema_migrations SET checksum = $1`, [sha256(text)])
  t.same(await migrate(db.url, { schema, dir }), { applied: [], current: ['0001'] })
  const [row] = await db.query<{ checksum: string }>(`SELECT checksum FROM ${schema}.schema_migrations`)
  t.equal(row?.checksum, loadMigrations(dir)[0]?.checksum, 'stored in the current form')
  t.not(row?.checksum, sha256(text))
  await db.query(`UPDATE ${schema}.schema_migrations SET checksum = $1`, [sha256('CREATE TABLE {{schema}}.a (id bigint);\n')])
  await t.rejects(migrate(db.url, { schema, dir }), { code: 'ANVIL_ERR_MIGRATION_CHANGED' }, 'the whole file of other statements')
})

t.test('a database the earlier builds migrated (whole-file checksums) is accepted as it is', async (t) => {
  const schema = 'earlier_builds'
  const shipped = loadMigrations()
  await migrate(db.url, { schema })
  // What those builds recorded: the whole file's sha256, for 0002 and 0003 as they read before their comments were edited.
  const recorded: Record<string, string> = {
    '0002': 'b3cacde9cd6678b39236bafa01a5ca9a72532c775f04d4a3c95965f39493ddec',
    '0003': '5594c294fb5fa608ac7b66bcf0d54cc4987af9fa7d7b168b6ddaafcd3842c8e8'
  }
  for (const m of shipped) {
    await db.query(`UPDATE ${schema}.schema_migrations SET checksum = $2 WHERE version = $1`, [m.version, recorded[m.version] ?? sha256(m.sql)])
  }
  t.same((await migrate(db.url, { schema })).applied, [])
  const rows = await db.query<{ version: string, checksum: string }>(`SELECT version, checksum FROM ${schema}.schema_migrations ORDER BY version`)
  t.same(rows, shipped.map((m) => ({ version: m.version, checksum: m.checksum })), 'each rewritten to the current form')
})

t.test('a failing migration rolls back the whole run', async (t) => {
  const broken = migrationsIn({
    '0001_ok.sql': 'CREATE TABLE {{schema}}.fine (id int);',
    '0002_broken.sql': 'CREATE TABLE {{schema}}.fine (id int);'
  })
  await t.rejects(migrate(db.url, { schema: 'broken', dir: broken }), /already exists/)
  const schemas = await db.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = 'broken'")
  t.equal(schemas.length, 0, 'not even the schema stays')
})

t.test('the shipped migrations apply to an empty database and again as a no-op', async (t) => {
  const shipped = loadMigrations()
  t.ok(shipped.every((m) => /^\d{4}$/.test(m.version)), 'every shipped file is NNNN_name.sql')
  t.equal(new Set(shipped.map((m) => m.version)).size, shipped.length, 'versions are unique')
  const first = await migrate(db.url)
  t.same(first.applied, shipped.map((m) => m.version))
  t.same((await migrate(db.url)).applied, [])
})

t.test('0003 adds nothing where an operator built its index CONCURRENTLY beforehand', async (t) => {
  const shipped = loadMigrations()
  const before = migrationsIn(Object.fromEntries(shipped.filter((m) => m.version < '0003').map((m) => [`${m.version}_${m.name}.sql`, m.sql])))
  t.same((await migrate(db.url, { schema: 'prebuilt', dir: before })).applied, ['0001', '0002'])
  await db.query("CREATE INDEX CONCURRENTLY IF NOT EXISTS outbox_finished ON prebuilt.outbox (created_at) WHERE status <> 'pending'")
  t.same((await migrate(db.url, { schema: 'prebuilt' })).applied, shipped.filter((m) => m.version >= '0003').map((m) => m.version))
  const indexes = await db.query("SELECT indexdef FROM pg_indexes WHERE schemaname = 'prebuilt' AND indexname = 'outbox_finished'")
  t.equal(indexes.length, 1, 'the one index, the operator\'s')
})

t.test('0006 folds the duplicate done attempts an earlier version wrote, then lets a job log its done once', async (t) => {
  const shipped = loadMigrations()
  const before = migrationsIn(Object.fromEntries(shipped.filter((m) => m.version < '0006').map((m) => [`${m.version}_${m.name}.sql`, m.sql])))
  await migrate(db.url, { schema: 'dupes', dir: before })
  await db.query(`INSERT INTO dupes.webhook_events (id, source, dedupe_key, payload, received_at, status, job_id)
    VALUES ('evt_1', 'stripe', 'k_1', '\\x7b7d', now(), 'done', 'e_1')`)
  await db.query(`INSERT INTO dupes.webhook_event_attempts (event_id, attempt, status, job_id)
    VALUES ('evt_1', 1, 'done', 'e_1'), ('evt_1', 1, 'done', 'e_1'), ('evt_1', 1, 'failed', 'e_1'), ('evt_1', 1, 'done', 'e_2')`)
  const through = migrationsIn(Object.fromEntries(shipped.filter((m) => m.version <= '0006').map((m) => [`${m.version}_${m.name}.sql`, m.sql])))
  t.ok((await migrate(db.url, { schema: 'dupes', dir: through })).applied.includes('0006'))
  const left = await db.query<{ status: string, job_id: string }>('SELECT status, job_id FROM dupes.webhook_event_attempts ORDER BY id')
  t.same(left, [{ status: 'done', job_id: 'e_1' }, { status: 'failed', job_id: 'e_1' }, { status: 'done', job_id: 'e_2' }], 'the first done of each job kept, the rest untouched')
  await t.rejects(db.query("INSERT INTO dupes.webhook_event_attempts (event_id, attempt, status, job_id) VALUES ('evt_1', 2, 'done', 'e_1')"),
    { code: '23505', constraint: 'webhook_event_attempts_done_once' }, 'a second done of a job is refused')
})

t.test('0007 moves the done attempts to their own table, keeps the log (a view) and each job\'s done once', async (t) => {
  const shipped = loadMigrations()
  const before = migrationsIn(Object.fromEntries(shipped.filter((m) => m.version < '0007').map((m) => [`${m.version}_${m.name}.sql`, m.sql])))
  await migrate(db.url, { schema: 'marks', dir: before })
  await db.query(`INSERT INTO marks.webhook_events (id, source, dedupe_key, payload, received_at, status, job_id)
    VALUES ('evt_1', 'stripe', 'k_1', '\\x7b7d', now(), 'done', 'e_1')`)
  await db.query(`INSERT INTO marks.webhook_event_attempts (event_id, attempt, status, error, job_id)
    VALUES ('evt_1', 1, 'failed', 'no luck', 'e_1'), ('evt_1', 2, 'done', NULL, 'e_1')`)
  const log = 'SELECT attempt, status, error, job_id FROM marks.webhook_event_attempts ORDER BY finished_at, id'
  const was = await db.query(log)
  const through = migrationsIn(Object.fromEntries(shipped.filter((m) => m.version <= '0007').map((m) => [`${m.version}_${m.name}.sql`, m.sql])))
  t.ok((await migrate(db.url, { schema: 'marks', dir: through })).applied.includes('0007'))
  t.same(await db.query(log), was, 'the attempt log reads as before')
  t.same(await db.query('SELECT event_id, job_id, attempt FROM marks.webhook_event_done'), [{ event_id: 'evt_1', job_id: 'e_1', attempt: 2 }], 'the done attempt is a mark')
  t.same(await db.query('SELECT status FROM marks.webhook_event_failures'), [{ status: 'failed' }], 'the failures stay')
  await t.rejects(db.query("INSERT INTO marks.webhook_event_done (event_id, job_id, attempt) VALUES ('evt_1', 'e_1', 3)"),
    { code: '23505', constraint: 'webhook_event_done_once' }, 'a second done of a job is refused')
  await db.query("DELETE FROM marks.webhook_events WHERE id = 'evt_1'")
  t.same(await db.query('SELECT 1 FROM marks.webhook_event_attempts'), [], 'the marks and failures go with their event')
})

t.test('bad input is one clear line, and a password is never echoed', async (t) => {
  t.throws(() => openDatabase('mysql://root:hunter2@localhost/x'), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /postgres:\/\/ or postgresql:\/\/, got mysql:\/\// })
  t.throws(() => openDatabase('not a url'), { message: /database URL is not a URL/ })
  t.throws(() => openDatabase(db.url, { schema: 'Robert"); DROP TABLE' }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /database schema must match/ })
  t.throws(() => openDatabase({} as never), { message: /postgres:\/\/ URL or a pg.Pool/ })
  try {
    openDatabase('mysql://root:hunter2@localhost/x')
  } catch (err) {
    t.notMatch((err as Error).message, /hunter2/)
  }
})

t.test('anvil migrate: applies, then is a no-op; a missing or bad URL is one line without the password', async (t) => {
  const { runCli } = await import('../helpers/cli.js')
  const other = await TestDatabase.create()
  t.teardown(async () => await other.drop())
  const first = await runCli(['migrate'], { env: { ANVIL_DATABASE_URL: other.url, ANVIL_DB_SCHEMA: 'cli_schema' } })
  t.equal(first.code, 0, first.stderr)
  const shipped = loadMigrations().map((m) => m.version)
  t.same(JSON.parse(first.stdout), { applied: shipped, current: shipped })
  const again = await runCli(['migrate', '--database-url', other.url, '--db-schema', 'cli_schema'])
  t.same(JSON.parse(again.stdout), { applied: [], current: shipped })
  const rows = await other.query("SELECT 1 FROM information_schema.tables WHERE table_schema = 'cli_schema' AND table_name = 'schema_migrations'")
  t.equal(rows.length, 1)
  const missing = await runCli(['migrate'])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /^anvil: invalid configuration: ANVIL_DATABASE_URL \(or --database-url\) is required/)
  const bad = await runCli(['migrate'], { env: { ANVIL_DATABASE_URL: 'mysql://root:hunter2@db/x' } })
  t.equal(bad.code, 1)
  t.match(bad.stderr, /ANVIL_DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/)
  t.notMatch(bad.stderr, /hunter2/)
  const schema = await runCli(['migrate', '--db-schema', 'Bad-Name'], { env: { ANVIL_DATABASE_URL: other.url } })
  t.match(schema.stderr, /--db-schema must be a lower-case SQL identifier/)
})
