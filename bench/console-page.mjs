// The console's first page on a large journal: GET /admin/events (and its common filters) over N journal rows,
// timed on the server with inject (no network). Needs `npm run build` first and PostgreSQL on 127.0.0.1:5432
// (trust as postgres, or ANVIL_BENCH_PG_URL): it makes a database of its own and drops it at the end.
//
//   node bench/console-page.mjs [--rows 100000] [--runs 15] [--quick]
import pg from 'pg'
import Fastify from 'fastify'
import { migrate } from '../dist/src/db/migrate.js'
import anvilAdmin from '../dist/plugins/admin/admin.js'
import { journalAdminRoutes } from '../dist/plugins/journal/admin-routes.js'
import { openEventLog } from '../dist/src/event-log/open-event-log.js'
import { benchArgs, benchDatabase, emitSection, showSpread, spread } from './lib.mjs'

const values = benchArgs({ rows: { type: 'string', default: '100000' }, runs: { type: 'string', default: '15' } })
const ROWS = values.quick ? 1000 : Number(values.rows)
const RUNS = values.quick ? 1 : Number(values.runs)
const TOKEN = 'bench-console-token-0123456789'
const QUERIES = ['', '?status=failed', '?provider=github&type=issues', '?since=24h', '?status=dead&since=7d', '?text=note%20999']

const database = await benchDatabase('console')
const url = database.url
let pool
let app
try {
  await migrate(url.toString())
  pool = new pg.Pool({ connectionString: url.toString(), max: 5 })
  // The database is dropped WITH (FORCE) at the end, which ends any connection still open.
  pool.on('error', () => {})
  // Rows as the worker writes them: two providers, four types, mostly done, a second apart going back.
  await pool.query(`INSERT INTO anvil.webhook_events (id, source, provider, event_type, dedupe_key, payload, received_at, status, attempts)
    SELECT 'evt_' || g, p, p, (ARRAY['invoice.paid', 'charge.failed', 'issues', 'customer.updated'])[1 + g % 4], 'k' || g,
      convert_to('{"id":"evt_' || g || '","note":"note ' || g || '"}', 'UTF8'),
      now() - (g || ' seconds')::interval, (ARRAY['done', 'done', 'done', 'failed', 'dead'])[1 + g % 5], 1
    FROM generate_series(1, $1::int) g, LATERAL (SELECT CASE WHEN g % 3 = 0 THEN 'github' ELSE 'stripe' END AS p) providers`, [ROWS])
  await pool.query('ANALYZE anvil.webhook_events')
  app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, routes: [journalAdminRoutes(openEventLog({ redis: 'redis://127.0.0.1:1', database: pool }))] })
  await app.ready()
  const rows = []
  for (const query of QUERIES) {
    const ms = []
    let items = 0
    for (let run = 0; run <= RUNS; run++) {
      const started = performance.now()
      const res = await app.inject({ url: `/admin/events${query}`, headers: { authorization: `Bearer ${TOKEN}` } })
      const took = performance.now() - started
      if (res.statusCode !== 200) throw new Error(`/admin/events${query}: ${res.statusCode} ${res.body}`)
      items = res.json().items.length
      // The first run warms the plan cache and the pool; it is not counted.
      if (run > 0) ms.push(took)
    }
    rows.push({ query: `/admin/events${query}`, items, ms: spread(ms) })
  }
  const markdown = [
    `Server time of the console's first page (inject, no network) over ${ROWS} journal rows; ms, median [min–max] of ${RUNS} runs after one warm-up.`, '',
    '| request | items | ms |', '|---|---|---|',
    ...rows.map((r) => `| \`${r.query}\` | ${r.items} | ${showSpread(r.ms, 1)} |`)
  ]
  emitSection({ id: 'console-page', title: 'Console first page', markdown, data: { rows: ROWS, runs: RUNS, results: rows } }, values)
} finally {
  await app?.close()
  await pool?.end()
  await database.drop()
}
