/**
 * `anvil events` takes what it printed and the URL people have: `events list` prints whole ids (a 64-character
 * one included), which `events show` finds; `--url` takes the server's base URL as well as its `/admin`, and a
 * URL that is neither is one line saying which to give.
 */
import t from 'tap'
import Fastify from 'fastify'
import { runCli } from '../helpers/cli.js'
import { journalFixture } from '../helpers/journal.js'
import anvilAdmin from '../../plugins/admin/admin.js'
import { journalAdminRoutes } from '../../plugins/journal/admin-routes.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { beforeStep } from '../helpers/before-all.js'

const TOKEN = 'admin-token-0123456789'
const { redis, db } = journalFixture(t)
const LONG_ID = 'a'.repeat(20) + 'b'.repeat(44)
beforeStep(t, async () => {
  await db.query(`INSERT INTO anvil.webhook_events (id, source, provider, event_type, dedupe_key, payload, received_at, status, attempts, job_id)
    VALUES ($1, 'billing', 'stripe', 'customer.subscription.trial_will_end', 'k-long', convert_to('{}', 'UTF8'), now(), 'done', 1, 'e_long')`, [LONG_ID])
})

t.test('events list prints whole ids: a 64-character id from the table is one `events show` finds', async (t) => {
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
  for (const url of [address, `${address}/`, `${address}/admin`]) {
    const list = await runCli(['events', 'list', '--url', url, '--json'], { env })
    t.equal(list.code, 0, list.stderr)
    t.same(list.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id), [LONG_ID], url)
  }
  const elsewhere = await runCli(['events', 'list', '--url', `${address}/api`], { env })
  t.equal(elsewhere.code, 1)
  t.equal(elsewhere.stderr, `anvil: invalid configuration: no admin API at ${address}/api (/events answered 404): give its base URL, e.g. http://127.0.0.1:3000/admin\n`)
})
