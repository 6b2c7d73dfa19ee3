// Re-send by filter (`POST /admin/messages/resend`) at scale: the page statement (src/sql/outbox.ts failedPage) over a
// seeded outbox of 1M messages (test/fixtures/outbox-seed.sql: 1 % never delivered, two failed attempts each, so 20k
// unresolved failures at 1M), p50/p99 ms of a page of 50 for filters that match many, few and none, and a full pass
// over every page. `--before` adds the statement as it was before migration 0020 (every unresolved failure read, then
// the outbox probed per message), on the same data. Target: a page costs what it returns, whatever the backlog; a
// filter that matches nothing reads nothing. Needs `npm run build` and PostgreSQL on 127.0.0.1:5432 (trust as
// postgres, or ANVIL_BENCH_PG_URL); makes a database of its own and drops it.
//
//   node bench/resend-filter.mjs [--rows 1000000] [--runs 50] [--before] [--quick]
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { migrate } from '../dist/src/db/migrate.js'
import * as outboxSql from '../dist/src/sql/outbox.js'
import { benchArgs, benchDatabase, emitSection, latencySummary, quantile, timed } from './lib.mjs'

const values = benchArgs({
  rows: { type: 'string', default: '1000000' },
  runs: { type: 'string', default: '50' },
  before: { type: 'boolean', default: false }
})
const ROWS = values.quick ? 20000 : Number(values.rows)
const RUNS = values.quick ? 3 : Number(values.runs)
const PASSES = values.quick ? 1 : 3
const LIMIT = 51
const SEED = readFileSync(new URL('../test/fixtures/outbox-seed.sql', import.meta.url), 'utf8')

/** The statement before 0020, for `--before`: every unresolved failure read, each message then probed. */
const BEFORE = `WITH undelivered AS MATERIALIZED (
      SELECT DISTINCT d.message_id FROM anvil.deliveries d
      WHERE $7::text IS DISTINCT FROM 'dispatch' AND d.status <> 'success' AND NOT d.resolved AND d.status = 'failed')
    SELECT id, created_at::text AS at FROM (
      (SELECT o.id, o.created_at FROM anvil.outbox o
        WHERE $7::text IS DISTINCT FROM 'delivery' AND o.status = 'failed' AND ${matches()}
        ORDER BY o.created_at, o.id LIMIT $8)
      UNION ALL
      (SELECT o.id, o.created_at FROM undelivered u
        CROSS JOIN LATERAL (SELECT o.id, o.created_at FROM anvil.outbox o
          WHERE o.id = u.message_id AND o.status = 'dispatched' AND ${matches()} OFFSET 0) o
        ORDER BY o.created_at, o.id LIMIT $8)) AS failed
    ORDER BY created_at, id LIMIT $8`
function matches () {
  return `($1::text IS NULL OR o.type = $1) AND ($2::text IS NULL OR o.tenant = $2)
      AND ($3::timestamptz IS NULL OR o.created_at >= $3) AND ($4::timestamptz IS NULL OR o.created_at < $4)
      AND ($5::timestamptz IS NULL OR (o.created_at >= $5 AND (o.created_at, o.id) > ($5, $6)))`
}

/** Every page of failed deliveries, cursor after cursor: the pages and the ms each took. */
async function fullPass (client, text) {
  const pages = []
  let after = [null, null]
  for (;;) {
    const started = performance.now()
    const { rows } = await client.query(text, [null, null, null, null, after[0], after[1], 'delivery', LIMIT])
    pages.push(performance.now() - started)
    if (rows.length < LIMIT) return pages
    const last = rows[LIMIT - 2]
    after = [last.at, last.id]
  }
}

const scratch = await benchDatabase('resend_filter')
const client = new pg.Client({ connectionString: scratch.url })
await client.connect()
try {
  await migrate(scratch.url)
  const seeding = performance.now()
  await client.query(SEED.replaceAll('{{schema}}', '"anvil"').replaceAll('{{rows}}', String(ROWS)))
  await client.query('VACUUM ANALYZE anvil.outbox, anvil.deliveries')
  const { rows: [counts] } = await client.query(`SELECT (SELECT count(*) FROM anvil.outbox)::int AS outbox,
    (SELECT count(*) FROM anvil.deliveries WHERE status = 'failed' AND NOT resolved)::int AS failures`)
  console.error(`seeded ${counts.outbox} messages, ${counts.failures} unresolved failures in ${((performance.now() - seeding) / 1000).toFixed(0)} s`)
  // A cursor a hundred pages in: the 5,000th undelivered message.
  const { rows: [middle] } = await client.query(`SELECT message_created_at::text AS at, message_id AS id FROM anvil.deliveries
    WHERE status = 'failed' AND NOT resolved ORDER BY message_created_at, message_id OFFSET $1 LIMIT 1`, [Math.min(10_000, counts.failures - 1)])
  // The seed's undelivered messages are all tenant t7's; t3 has failed dispatches but no failed delivery.
  const cases = [
    ['first page, both kinds', [null, null, null, null, null, null, null, LIMIT]],
    ['first page, failed deliveries', [null, null, null, null, null, null, 'delivery', LIMIT]],
    ['a page 100 pages in', [null, null, null, null, middle.at, middle.id, 'delivery', LIMIT]],
    ['a tenant with failures (t7)', [null, 't7', null, null, null, null, 'delivery', LIMIT]],
    ['a tenant with none (t3): matches nothing', [null, 't3', null, null, null, null, 'delivery', LIMIT]],
    ['a type no message has: matches nothing', ['no.such.type', null, null, null, null, null, null, LIMIT]]
  ]
  const statements = [['now', outboxSql.failedPage('anvil')], ...(values.before ? [['before 0020', BEFORE]] : [])]
  const rows = []
  for (const [name, params] of cases) {
    const row = [name]
    for (const [, text] of statements) {
      const { p50, p99 } = latencySummary(await timed(RUNS, () => client.query(text, params)))
      row.push(p50.toFixed(2), p99.toFixed(2))
    }
    rows.push(row)
  }
  const passes = []
  for (const [label, text] of statements) {
    // The statement before 0020 takes minutes a pass at 1M: one pass of it.
    for (let pass = 0; pass < (label === 'now' ? PASSES : 1); pass++) {
      const pages = await fullPass(client, text)
      const sorted = [...pages].sort((a, b) => a - b)
      passes.push([label, pages.length, pages.reduce((a, b) => a + b, 0).toFixed(0), quantile(sorted, 0.5).toFixed(2), quantile(sorted, 0.99).toFixed(2)])
    }
  }
  const header = statements.flatMap(([label]) => [`${label} p50 ms`, `${label} p99 ms`])
  emitSection({
    title: 'Re-send by filter at scale',
    markdown: [
      `${counts.outbox} messages, ${counts.failures} unresolved failures; a page of ${LIMIT - 1} (the statement reads ${LIMIT}); ${RUNS} runs per row.`,
      '',
      `| page | ${header.join(' | ')} |`,
      `|---|${header.map(() => '---').join('|')}|`,
      ...rows.map((row) => `| ${row.join(' | ')} |`),
      '',
      'A full pass over every page of failed deliveries:',
      '',
      '| statement | pages | total ms | p50 ms a page | p99 ms a page |',
      '|---|---|---|---|---|',
      ...passes.map((row) => `| ${row.join(' | ')} |`)
    ]
  }, values)
} finally {
  await client.end()
  await scratch.drop()
}
