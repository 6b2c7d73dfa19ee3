/**
 * `anvil events list|show` and `anvil replay --filter [--dry-run] [--rate N]`, straight to
 * PostgreSQL and Redis, through the admin API (--url, ANVIL_ADMIN_TOKEN), and on the dead letters without a
 * database; Ctrl-C stops a bulk replay cleanly and says how many were replayed. `events list` prints whole ids,
 * which `events show` finds, and `--url` takes the server's base URL as well as its `/admin`. `anvil replay`: one
 * dead letter, or --all with --limit. One file, one redis-server and one database for them all.
 */
import t from 'tap'
import Fastify from 'fastify'

import { deadLetters, inspect, runCli, runCliOnStoppedRedis, startCli } from '../helpers/cli.js'
import { refusal } from '../helpers/program.js'
import { loadJournalConfig } from '../../cli/config/load-database-config.js'
import { addJob, jobData, openQueue, journalFixture } from '../helpers/journal.js'
import anvilAdmin from '../../plugins/admin/admin.js'
import { journalAdminRoutes } from '../../plugins/journal/admin-routes.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-0123456789'
const { redis, db } = journalFixture(t)

async function seedFailed (prefix: string, count: number, provider = 'stripe'): Promise<void> {
  await db.query(`INSERT INTO anvil.webhook_events (id, source, provider, event_type, dedupe_key, payload, received_at, status, attempts, error_class, last_error, job_id)
    SELECT $1 || n, 'billing', $3, 'invoice.paid', 'k' || $1 || n, convert_to('{"n":' || n || '}', 'UTF8'), now() - make_interval(secs => n),
      'failed', 2, 'ECONNREFUSED', 'connect ECONNREFUSED', 'e_' || $1 || n FROM generate_series(1, $2::int) AS n`, [prefix, count, provider])
}

// The journal's only row while the two tests below run (they come first): `events list` with no filter lists it alone.
const LONG_ID = 'a'.repeat(20) + 'b'.repeat(44)
async function insertLong (): Promise<void> {
  await db.query(`INSERT INTO anvil.webhook_events (id, source, provider, event_type, dedupe_key, payload, received_at, status, attempts, job_id)
    VALUES ($1, 'billing', 'stripe', 'customer.subscription.trial_will_end', 'k-long', convert_to('{}', 'UTF8'), now(), 'done', 1, 'e_long')`, [LONG_ID])
}

t.test('events list prints whole ids: a 64-character id from the table is one `events show` finds', async (t) => {
  await insertLong()
  const env = { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url }
  const table = await runCli(['events', 'list', '--provider', 'stripe'], { env })
  t.equal(table.code, 0, table.stderr)
  const shown = table.stdout.trim().split('\n')[1]?.split(/\s+/)[1] ?? ''
  t.equal(shown, LONG_ID, 'the ID column holds the whole id')
  t.match(table.stdout, /customer\.subscription\.trial_will_end\s+done/, 'and the whole type')
  const show = await runCli(['events', 'show', shown], { env })
  t.equal(show.code, 0, show.stderr)
  t.match(JSON.parse(show.stdout), { id: LONG_ID })
})

t.test('--url: the server\'s base URL means its /admin; a URL elsewhere on the server is one line saying which to give', async (t) => {
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, routes: [journalAdminRoutes(openEventLog({ redis: redis.url, database: db.url, queueName: 'cli-forgiving' }))] })
  t.teardown(async () => await app.close())
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const env = { ANVIL_ADMIN_TOKEN: TOKEN }
  const list = await runCli(['events', 'list', '--url', `${address}/`, '--json'], { env })
  t.equal(list.code, 0, list.stderr)
  t.same(list.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id), [LONG_ID], 'the base URL, with its slash')
  // The other spellings are the same admin API to the CLI's config (a process each would add nothing).
  for (const url of [address, `${address}/admin`]) t.same(loadJournalConfig(env, { url }).admin, { url: `${address}/admin`, token: TOKEN }, url)
  const elsewhere = await runCli(['events', 'list', '--url', `${address}/api`], { env })
  t.equal(elsewhere.code, 1)
  t.equal(elsewhere.stderr, `anvil: invalid configuration: no admin API at ${address}/api (/events answered 404): give its base URL, e.g. http://127.0.0.1:3000/admin\n`)
  await db.query('DELETE FROM anvil.webhook_events WHERE id = $1', [LONG_ID])
})

t.test('events list (table and NDJSON) and events show, straight to PostgreSQL', async (t) => {
  await seedFailed('list_', 3)
  const env = { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_QUEUE: 'cli-events' }
  const json = await runCli(['events', 'list', '--status', 'failed', '--provider', 'stripe', '--since', '2h', '--error', 'ECONNREFUSED', '--json'], { env })
  t.equal(json.code, 0, json.stderr)
  const items = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string, status: string })
  t.same(items.map((i) => i.id), ['list_1', 'list_2', 'list_3'], 'NDJSON, newest first')
  t.match(items[0], { id: 'list_1', source: 'billing', provider: 'stripe', eventType: 'invoice.paid', status: 'failed', attempts: 2, errorClass: 'ECONNREFUSED' })
  const table = await runCli(['events', 'list', '--status', 'failed', '--limit', '2'], { env })
  t.match(table.stdout, /^RECEIVED\s+ID\s+PROVIDER\s+TYPE\s+STATUS\s+ATT\s+ERROR\n/)
  t.match(table.stdout, /list_1\s+stripe\s+invoice\.paid\s+failed\s+2\s+ECONNREFUSED: connect ECONNREFUSED/)
  t.equal(table.stdout.trim().split('\n').length, 3, 'a header and two rows')
  const show = await runCli(['events', 'show', 'list_2'], { env })
  t.match(JSON.parse(show.stdout), { id: 'list_2', payload: '{"n":2}', json: { n: 2 }, effects: [] })
  const bad = await runCli(['events', 'list', '--status', 'borked'], { env })
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^anvil: invalid filter: status must be one of received, processing, done, failed, dead/)
  const missing = await runCli(['events', 'show', 'nope'], { env })
  t.equal(missing.stderr, 'anvil: no event with id nope in the journal\n')
  await db.query("DELETE FROM anvil.webhook_events WHERE id LIKE 'list_%'")
})

t.test('replay --filter: a dry run counts; a run replays at a rate and prints its final state', async (t) => {
  await seedFailed('run_', 30)
  const queueName = 'cli-replay-filter'
  const env = { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_QUEUE: queueName }
  const dry = await runCli(['replay', '--filter', 'status=failed', '--filter', 'error=ECONNREFUSED', '--dry-run'], { env })
  t.equal(dry.code, 0, dry.stderr)
  t.same(JSON.parse(dry.stdout), { matched: 30 })
  const run = await runCli(['replay', '--filter', 'status=failed', '--rate', '1000'], { env })
  t.equal(run.code, 0, run.stderr)
  t.match(JSON.parse(run.stdout), { matched: 30, replayed: 30, state: 'done' })
  t.match(run.stderr, /replayed 30 of 30 events/)
  const queue = openQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  t.equal(await queue.count(), 30)
  // Refused before connecting anywhere: in this process, through the CLI's program (test/helpers/program.ts).
  const unknown = await refusal(['replay', '--filter', 'colour=red'], env)
  t.match(unknown, { code: 1, stderr: /^anvil: invalid filter: --filter takes key=value with a key of provider, source, type, status, error, since, until, text \(got "colour=red"\)\n$/ })
  const both = await refusal(['replay', 'd_x', '--filter', 'status=failed'], env)
  t.match(both, { code: 1, stderr: /^anvil: give a dead-letter id, --all, or --filter\n$/ })
  const rate = await refusal(['replay', '--filter', 'status=failed', '--rate', '0'], env)
  t.match(rate, { code: 1, stderr: /^anvil: --rate must be a whole number of events a second, at least 1/ })
  await db.query("DELETE FROM anvil.webhook_events WHERE id LIKE 'run_%'")
})

t.test('Ctrl-C stops a bulk replay cleanly and says how many were replayed', async (t) => {
  await seedFailed('int_', 400, 'github')
  const env = { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_QUEUE: 'cli-replay-interrupt' }
  const cli = startCli(t, ['replay', '--filter', 'provider=github', '--rate', '50'], { env })
  await eventually('some progress', async () => (await db.query<{ replayed: number }>('SELECT replayed FROM anvil.replay_runs WHERE matched = 400 AND replayed > 0')).length > 0, 30_000)
  t.equal(await cli.stop('SIGINT'), 0, cli.output)
  const last = JSON.parse(cli.lines.filter((l) => l !== '').at(-1) ?? '{}') as { replayed: number, matched: number, state: string }
  t.equal(last.state, 'cancelled')
  t.equal(last.matched, 400)
  t.ok(last.replayed > 0 && last.replayed < 400)
  t.match(cli.stderr, new RegExp(`cancelled: replayed ${last.replayed} of 400 events`))
  const [run] = await db.query<{ state: string, replayed: number }>('SELECT state, replayed FROM anvil.replay_runs WHERE matched = 400')
  t.same(run, { state: 'cancelled', replayed: last.replayed }, 'the table agrees')
})

t.test('through the admin API (--url, ANVIL_ADMIN_TOKEN); a URL without the token is one line', async (t) => {
  await seedFailed('api_', 2, 'paddle')
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, routes: [journalAdminRoutes(openEventLog({ redis: redis.url, database: db.url, queueName: 'cli-api' }))] })
  t.teardown(async () => await app.close())
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const env = { ANVIL_ADMIN_URL: `${address}/admin`, ANVIL_ADMIN_TOKEN: TOKEN }
  const list = await runCli(['events', 'list', '--provider', 'paddle', '--json'], { env })
  t.equal(list.code, 0, list.stderr)
  t.same(list.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id), ['api_1', 'api_2'])
  const dry = await runCli(['replay', '--url', `${address}/admin`, '--filter', 'provider=paddle', '--dry-run'], { env: { ANVIL_ADMIN_TOKEN: TOKEN } })
  t.same(JSON.parse(dry.stdout), { matched: 2 })
  const run = await runCli(['replay', '--filter', 'provider=paddle'], { env })
  t.match(JSON.parse(run.stdout), { matched: 2, replayed: 2, state: 'done' })
  const bad = await runCli(['events', 'list', '--since', 'someday'], { env })
  t.match(bad.stderr, /^anvil: invalid filter: since must be an ISO 8601 time/, 'the server\'s 400 message')
  const noToken = await refusal(['events', 'list'], { ANVIL_ADMIN_URL: `${address}/admin` })
  t.same(noToken, { code: 1, stdout: '', stderr: 'anvil: invalid configuration: ANVIL_ADMIN_URL needs ANVIL_ADMIN_TOKEN: the admin API\'s token\n' })
  const wrong = await runCli(['events', 'list'], { env: { ...env, ANVIL_ADMIN_TOKEN: 'wrong-token-0123456789' } })
  t.equal(wrong.stderr, 'anvil: missing or wrong admin token\n')
})

t.test('without a database: events list (with Redis too busy to answer at first) and replay --filter work on the dead letters; replay <id> is unchanged', async (t) => {
  const queueName = 'cli-events-dead'
  const ids = await deadLetters(t, redis.url, queueName, 2)
  const env = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName }
  // Redis takes the connection but answers nothing until the command waits on it: one that only reads waits, as the worker does.
  const list = await runCliOnStoppedRedis(redis, ['events', 'list', '--status', 'dead', '--json'], { env })
  t.equal(list.code, 0, list.stderr)
  t.same(list.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id).sort(), [...ids].sort())
  const one = await runCli(['replay', ids[0] as string], { env })
  t.match(JSON.parse(one.stdout), { deadLetterId: ids[0], replayedNow: true })
  const rest = await runCli(['replay', '--filter', 'status=dead'], { env })
  t.match(JSON.parse(rest.stdout), { matched: 1, replayed: 1, state: 'done' })
})

t.test('anvil worker journals its events when ANVIL_DATABASE_URL is set', async (t) => {
  const queueName = 'cli-worker-journal'
  const cli = startCli(t, ['worker', '--handler', 'test/fixtures/record-handler.mjs', '--queue', queueName], {
    env: { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', ANVIL_JOURNAL_RETENTION_DAYS: '7' }
  })
  await cli.log('anvil worker: started')
  const queue = openQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  await addJob(queue, jobData({ eventId: 'evt_cli_ok', body: { id: 'evt_cli_ok', n: 1 } }))
  await addJob(queue, jobData({ eventId: 'evt_cli_dead', body: { id: 'evt_cli_dead', n: 10 } }))
  await eventually('both rows', async () => (await db.query(
    "SELECT 1 FROM anvil.webhook_events WHERE (id = 'evt_cli_ok' AND status = 'done') OR (id = 'evt_cli_dead' AND status = 'dead')")).length === 2, 30_000)
  t.equal(await cli.stop(), 0)
})

t.test('replay <id> replays one dead letter; again is a no-op; an unknown id exits 1', async (t) => {
  const queueName = 'cli-replay-one'
  const [id] = await deadLetters(t, redis.url, queueName, 1) as [string]
  const env = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName }
  const first = await runCli(['replay', id], { env })
  t.equal(first.code, 0, first.stderr)
  t.same(JSON.parse(first.stdout), { deadLetterId: id, jobId: `r_${id}`, replayedNow: true })
  t.equal(await inspect(t, redis.url, queueName).getJobState(`r_${id}`), 'waiting', 'the replay is queued')
  const again = await runCli(['replay', id], { env })
  t.same(JSON.parse(again.stdout), { deadLetterId: id, jobId: `r_${id}`, replayedNow: false })
  const unknown = await runCli(['replay', 'd_nope'], { env })
  t.equal(unknown.code, 1)
  t.equal(unknown.stderr, 'anvil: no dead letter with id d_nope\n')
  t.equal(unknown.stdout, '')
})

t.test('replay --all --limit N replays at most N, oldest first; --all replays the rest', async (t) => {
  const queueName = 'cli-replay-all'
  const ids = await deadLetters(t, redis.url, queueName, 3)
  const env = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName }
  const limited = await runCli(['replay', '--all', '--limit', '2'], { env })
  t.equal(limited.code, 0, limited.stderr)
  const firstTwo = limited.stdout.split('\n').map((line) => JSON.parse(line) as { deadLetterId: string, replayedNow: boolean })
  t.same(firstTwo.map((r) => r.deadLetterId), ids.slice(0, 2))
  t.ok(firstTwo.every((r) => r.replayedNow))
  const rest = await runCli(['replay', '--all'], { env })
  t.equal(rest.code, 0, rest.stderr)
  t.same(JSON.parse(rest.stdout), { deadLetterId: ids[2], jobId: `r_${ids[2] as string}`, replayedNow: true })
  const none = await runCli(['replay', '--all'], { env })
  t.same([none.code, none.stdout], [0, ''], 'nothing left to replay')
})