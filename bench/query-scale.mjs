// The outbox's and the journal's admin queries, stats and retention at two sizes: the same statements over a seeded outbox of
// 10k and of 1M messages (test/fixtures/outbox-seed.sql: about 1.6 delivery rows each, analyzed), p50/p99 of
// each. Target: p99 at 1M within 2× of p99 at 10k. `--before` adds the statements as they were before
// migration 0008, for comparison. Needs `npm run build` and PostgreSQL on 127.0.0.1:5432 (trust as postgres,
// or ANVIL_BENCH_PG_URL); makes a database of its own per size and drops it.
//
//   node bench/query-scale.mjs [--sizes 10000,1000000] [--runs 200] [--retention-runs 30] [--before] [--quick]
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { migrate } from '../dist/src/db/migrate.js'
import { openDatabase } from '../dist/src/db/database.js'
import { createDeliveryLog } from '../dist/src/delivery-log/delivery-log.js'
import { createEndpointStore } from '../dist/src/endpoints/endpoint-store.js'
import * as outboxSql from '../dist/src/sql/outbox.js'
import { dropDay } from '../dist/src/sql/day-partitions.js'
import { listEvents } from '../dist/src/event-log/event-queries.js'
import { resolveFilter } from '../dist/src/event-log/event-filter.js'
import { journalStats } from '../dist/src/event-log/journal-stats.js'
import { benchArgs, benchDatabase, emitSection, latencySummary, timed } from './lib.mjs'

const values = benchArgs({
  sizes: { type: 'string', default: '10000,1000000' },
  runs: { type: 'string', default: '200' },
  'retention-runs': { type: 'string', default: '30' },
  before: { type: 'boolean', default: false }
})
const SIZES = values.quick ? [6000, 12000] : values.sizes.split(',').map(Number)
const RUNS = values.quick ? 3 : Number(values.runs)
const RETENTION_RUNS = values.quick ? 2 : Number(values['retention-runs'])
const BEFORE_RUNS = values.quick ? 1 : 5
/** Messages retention finds idle in each size: the same work per pass whatever the size. */
const IDLE = 3000
const BATCH = 1000
const SEED = readFileSync(new URL('../test/fixtures/outbox-seed.sql', import.meta.url), 'utf8')
/** The journal's seed: events over 33 days, so retention at 30 days finds about a tenth of them expired. */
const JOURNAL_SEED = readFileSync(new URL('../test/fixtures/journal-seed.sql', import.meta.url), 'utf8')
/** Journal retention batches timed per pass: the same work per pass whatever the size. */

/** The statements as they were before 0008, only for `--before`. */
const BEFORE = {
  undelivered: `SELECT u.*, o.public_type AS type FROM (
      SELECT max(d.id) AS last_id, d.message_id, d.endpoint_id, count(*)::int AS attempts, max(d.created_at) AS last_attempt_at,
        (array_agg(d.http_status ORDER BY d.id DESC))[1] AS last_http_status, (array_agg(d.error ORDER BY d.id DESC))[1] AS last_error
      FROM anvil.deliveries d GROUP BY d.message_id, d.endpoint_id HAVING NOT bool_or(d.status = 'success')) u
    LEFT JOIN anvil.outbox o ON o.id = u.message_id ORDER BY u.last_id DESC LIMIT 51`,
  stats: `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'failed')::int AS failed,
      extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'pending'))::float8 AS oldest
    FROM anvil.outbox WHERE status IN ('pending', 'failed')`,
  retention: `WITH doomed AS (
      SELECT o.id FROM anvil.outbox o
      WHERE o.status <> 'pending' AND o.created_at < now() - make_interval(secs => $1) AND greatest(o.dispatched_at, o.next_attempt_at) < now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM anvil.deliveries d WHERE d.message_id = o.id AND d.created_at >= now() - make_interval(secs => $1))
      LIMIT $2 FOR UPDATE OF o SKIP LOCKED),
    logged AS (DELETE FROM anvil.deliveries d USING doomed WHERE d.message_id = doomed.id RETURNING 1),
    gone AS (DELETE FROM anvil.outbox o USING doomed WHERE o.id = doomed.id RETURNING 1)
    SELECT (SELECT count(*) FROM gone)::int AS messages, (SELECT count(*) FROM logged)::int AS deliveries`
}

async function measure (size) {
  const scratch = await benchDatabase(`scale_${size}`)
  const url = scratch.url
  const database = openDatabase(url.toString())
  database.pool.on('error', () => {})
  // Seeding and the statements of before 0008 take longer than the pool's statement timeout at 1M rows.
  const raw = new pg.Client({ connectionString: url.toString() })
  await raw.connect()
  try {
    await migrate(url.toString())
    const seeding = performance.now()
    await raw.query(SEED.replaceAll('{{schema}}', '"anvil"').replaceAll('{{rows}}', String(size)))
    await raw.query(JOURNAL_SEED.replaceAll('{{schema}}', '"anvil"').replaceAll('{{rows}}', String(size)))
    // As autovacuum leaves a table that has had its writes: the visibility map set.
    await raw.query('VACUUM ANALYZE anvil.outbox, anvil.deliveries, anvil.webhook_events, anvil.webhook_effects, anvil.webhook_event_failures')
    const { rows: [counts] } = await raw.query(
      'SELECT (SELECT count(*) FROM anvil.outbox)::int AS outbox, (SELECT count(*) FROM anvil.deliveries)::int AS deliveries')
    console.error(`${size}: seeded ${counts.outbox} messages, ${counts.deliveries} deliveries in ${((performance.now() - seeding) / 1000).toFixed(0)} s`)
    const log = createDeliveryLog(database)
    const endpoints = createEndpointStore(database, { httpsOnly: false })
    const second = (await log.undelivered({})).next ?? undefined
    // The seed spreads the messages over 60 days: this age leaves IDLE of them idle.
    const idleSeconds = Math.floor(60 * 86400 * (1 - IDLE / size))
    const results = {
      'GET /admin/undelivered': await timed(RUNS, () => log.undelivered({})),
      'GET /admin/undelivered, page 2': await timed(RUNS, () => log.undelivered({ cursor: second })),
      // The seed's undelivered pairs are ep_2's, ep_35's and ep_69's.
      'GET /admin/undelivered?endpoint=, one with pairs': await timed(RUNS, () => log.undelivered({ endpoint: 'ep_2' })),
      'GET /admin/undelivered?endpoint=, one without': await timed(RUNS, () => log.undelivered({ endpoint: 'ep_42' })),
      'GET /admin/deliveries': await timed(RUNS, () => log.list({})),
      'GET /admin/deliveries?status=failed': await timed(RUNS, () => log.list({ status: 'failed' })),
      'GET /admin/deliveries?endpoint=': await timed(RUNS, () => log.list({ endpoint: 'ep_42' })),
      'GET /admin/endpoints?tenant=': await timed(RUNS, () => endpoints.list({ tenant: 't3' })),
      'GET /admin/messages/:id': await timed(RUNS, () => log.message(`msg_${Math.floor(size / 2)}`)),
      'recover: failed since 7 days': await timed(RUNS, () => log.failedSince('ep_2', new Date(Date.now() - 7 * 86400_000).toISOString())),
      'outbox stats (every metrics scrape)': await timed(RUNS, () => database.pool.query(outboxSql.stats('anvil'))),
      'POST /admin/messages/resend, a dry run\'s page': await timed(RUNS, () => database.pool.query(outboxSql.failedPage('anvil'), [null, null, null, null, null, null, null, 51])),
      'POST /admin/messages/resend, failed deliveries of a tenant': await timed(RUNS, () => database.pool.query(outboxSql.failedPage('anvil'), [null, 't3', null, null, null, null, 'delivery', 51])),
      ...await retention(database, idleSeconds),
      'GET /admin/events': await timed(RUNS, () => listEvents(database, resolveFilter({}), { limit: 50 })),
      'GET /admin/events?status=failed,dead': await timed(RUNS, () => listEvents(database, resolveFilter({ status: 'failed,dead' }), { limit: 50 })),
      'GET /admin/stats, the journal\'s day': await timed(RUNS, () => journalStats(database, 86_400_000)),
      // Days past retention are dropped whole (migration 0013): a pass drops the oldest day, rolled back.
      'journal retention, a day dropped': await rolledBack(raw, RETENTION_RUNS, async (client) => {
        await client.query(dropDay('anvil', 'webhook_events', new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 34 * 86_400_000)))
      })
    }
    if (values.before) {
      results['before 0008: GET /admin/undelivered'] = await timed(BEFORE_RUNS, () => raw.query(BEFORE.undelivered))
      results['before 0008: outbox stats'] = await timed(BEFORE_RUNS, () => raw.query(BEFORE.stats))
      results['before 0008: retention, a batch of messages'] = await rolledBack(raw, BEFORE_RUNS, (client) => client.query(BEFORE.retention, [idleSeconds, BATCH]))
    }
    return { size, counts, results: Object.fromEntries(Object.entries(results).map(([query, ms]) => [query, latencySummary(ms)])) }
  } finally {
    await raw.end()
    await database.close()
    await scratch.drop()
  }
}

/** Runs `fn` in a transaction that is rolled back, so every run finds the same rows. */
async function rolledBack (client, runs, fn) {
  return await timed(runs, async () => {
    await client.query('BEGIN')
    try { await fn(client) } finally { await client.query('ROLLBACK') }
  })
}

/**
 * A retention pass as the worker runs it, rolled back after each run: batches of idle messages until none is
 * left, then the delivery log's oldest day dropped (migration 0028: the log goes by day, not row by row); the time of each.
 */
async function retention (database, idleSeconds) {
  const messages = []
  const days = []
  const client = await database.pool.connect()
  const batches = async (sql, into) => {
    for (;;) {
      const started = performance.now()
      const { rows, rowCount } = await client.query(sql, [idleSeconds, BATCH])
      into.push(performance.now() - started)
      if ((rows[0]?.messages ?? rowCount) < BATCH) return
    }
  }
  try {
    for (let run = 0; run <= RETENTION_RUNS; run++) {
      await client.query('BEGIN')
      const [m, o] = run === 0 ? [[], []] : [messages, days]
      await batches(outboxSql.deleteIdle('anvil'), m)
      const started = performance.now()
      await client.query(dropDay('anvil', 'deliveries', new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 61 * 86_400_000)))
      o.push(performance.now() - started)
      await client.query('ROLLBACK')
    }
  } finally {
    client.release()
  }
  return { 'retention, a batch of idle messages': messages, 'retention, the delivery log\'s oldest day dropped': days }
}

const measured = []
for (const size of SIZES) measured.push(await measure(size))
const [small, large] = measured
const f = (x) => x < 10 ? x.toFixed(2) : x.toFixed(0)
const markdown = [
  `Each statement over a seeded outbox (test/fixtures/outbox-seed.sql), ${RUNS} runs (retention: every batch of ${RETENTION_RUNS} rolled-back passes) after one warm-up; ms.`,
  `Sizes: ${measured.map((m) => `${m.counts.outbox} messages / ${m.counts.deliveries} deliveries`).join(' and ')}.`, '',
  `| query | p50 ${small.size} | p99 ${small.size} | p50 ${large?.size ?? '-'} | p99 ${large?.size ?? '-'} | p99 ratio (target ≤ 2) |`,
  '|---|---|---|---|---|---|',
  ...Object.keys(small.results).map((query) => {
    const a = small.results[query]
    const b = large?.results[query]
    return `| ${query} | ${f(a.p50)} | ${f(a.p99)} | ${b === undefined ? '-' : f(b.p50)} | ${b === undefined ? '-' : f(b.p99)} | ${b === undefined ? '-' : (b.p99 / a.p99).toFixed(2)} |`
  })
]
emitSection({ id: 'query-scale', title: 'Outbox queries at scale', markdown, data: measured }, values)
