// The event journal (issue 18): worker drain with the journal and `once()` on against off, and a bulk replay's
// events/s, in one run on a private redis-server and a database of its own on the machine's PostgreSQL
// (ANVIL_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres; created and dropped here).
// The ingress is not measured here: with the journal written by the worker, the ingress path has no PostgreSQL.
// Usage: node bench/journal.mjs [--jobs 3000] [--runs 3] [--concurrency 10,50] [--replay 10000] [--quick]
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { Queue } from 'bullmq'
import { createWorker, migrate, openEventLog } from '../dist/index.js'
import { benchArgs, emitSection, showSpread, spread, startRedis } from './lib.mjs'

const values = benchArgs({
  jobs: { type: 'string', default: '3000' },
  runs: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '10,50' },
  replay: { type: 'string', default: '10000' }
})
const jobs = values.quick ? 200 : Number(values.jobs)
const runs = values.quick ? 1 : Number(values.runs)
const replayCount = values.quick ? 500 : Number(values.replay)
const concurrencies = values.concurrency.split(',').map(Number)
const GIVE_UP_MS = 180_000
const ADMIN_URL = process.env.ANVIL_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

async function admin (sql) {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try { await client.query(sql) } finally { await client.end() }
}
const dbName = `anvil_bench_${process.pid}`
await admin(`CREATE DATABASE ${dbName}`)
const dbUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${dbName}` }).toString()
await migrate(dbUrl)
const pool = new pg.Pool({ connectionString: dbUrl, max: 12 })
// The database is dropped with its connections at the end: an idle client's error then is expected.
pool.on('error', () => {})
const redis = await startRedis()
const queue = new Queue('webhooks', { connection: { url: redis.url }, prefix: '{anvil}' })

/** The same N jobs the ingress would make (1 KB-ish JSON, headers, a signature), each with a new id and key. */
async function fill () {
  await redis.client.flushall()
  await pool.query('TRUNCATE anvil.webhook_events CASCADE')
  for (let i = 0; i < jobs; i += 500) {
    await queue.addBulk(Array.from({ length: Math.min(500, jobs - i) }, (_, k) => {
      const n = i + k
      const body = JSON.stringify({ id: `evt_${n}`, type: 'invoice.paid', data: { object: { amount: n, currency: 'eur', lines: 'x'.repeat(800) } } })
      return {
        name: 'webhook',
        data: {
          v: 1, source: 'stripe', provider: 'stripe', eventType: 'invoice.paid', eventId: `evt_${n}`, key: `k_${randomUUID()}`,
          payload: Buffer.from(body).toString('base64'), contentType: 'application/json', signature: 't=1,v1=abc',
          headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=abc', 'user-agent': 'Stripe/1.0' },
          receivedAt: Date.now(), retry: [1000], requestId: `req_${n}`
        },
        opts: { jobId: `e_${n}`, attempts: 2, backoff: { type: 'anvil' } }
      }
    }))
  }
}

async function drain (side, concurrency) {
  let first = 0
  let last = 0
  let completed = 0
  let done
  const finished = new Promise((resolve) => { done = resolve })
  const handler = side === 'off' || side === 'rows' ? async () => {} : async (event) => { await event.once('record', () => ({ ok: true })) }
  const journal = { database: pool, retentionDays: 0, synchronousCommit: side !== 'async' }
  const worker = createWorker(handler, { redis: redis.url, concurrency, sweepIntervalMs: 0, ...(side === 'off' ? {} : { journal }) })
  worker.worker.on('completed', () => {
    const now = performance.now()
    if (completed === 0) first = now
    if (++completed === jobs) { last = now; done() }
  })
  let failed = 0
  worker.worker.on('failed', () => { failed++ })
  await worker.start()
  let timer
  try {
    await Promise.race([finished, new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`journal: ${side} completed ${completed} of ${jobs}`)), GIVE_UP_MS) })])
  } finally {
    clearTimeout(timer)
    await worker.close()
  }
  if (failed > 0) throw new Error(`journal: ${failed} jobs failed on ${side}`)
  if (side === 'journal' || side === 'async') {
    const { rows } = await pool.query("SELECT count(*) FILTER (WHERE status = 'done') AS done, (SELECT count(*) FROM anvil.webhook_effects) AS effects FROM anvil.webhook_events")
    if (Number(rows[0].done) !== jobs || Number(rows[0].effects) !== jobs) throw new Error(`journal: ${rows[0].done} rows done, ${rows[0].effects} effects of ${jobs}`)
  }
  return (jobs - 1) / ((last - first) / 1000)
}

async function bulkReplay () {
  await redis.client.flushall()
  await pool.query('TRUNCATE anvil.webhook_events CASCADE')
  await pool.query(`INSERT INTO anvil.webhook_events (id, source, provider, event_type, dedupe_key, payload, received_at, status, attempts, error_class, job_id)
    SELECT 'evt_' || n, 'stripe', 'stripe', 'invoice.paid', 'k_' || n, convert_to('{"id":"evt_' || n || '"}', 'UTF8'), now() - make_interval(secs => n),
      'failed', 2, 'ETIMEDOUT', 'e_' || n FROM generate_series(1, ${replayCount}) AS n`)
  const log = openEventLog({ redis: redis.url, database: pool })
  try {
    const began = performance.now()
    const { id } = await log.startReplay({ status: 'failed' })
    const status = await log.waitReplay(id)
    if (status.replayed !== replayCount) throw new Error(`journal: replayed ${status.replayed} of ${replayCount}`)
    return replayCount / ((performance.now() - began) / 1000)
  } finally {
    await log.close()
  }
}

const rows = []
let replayRate
try {
  for (const concurrency of concurrencies) {
    const rates = { off: [], rows: [], journal: [], async: [] }
    for (let run = 0; run < runs; run++) {
      for (const side of run % 2 === 0 ? ['off', 'rows', 'journal', 'async'] : ['async', 'journal', 'rows', 'off']) {
        await fill()
        rates[side].push(await drain(side, concurrency))
      }
    }
    const row = {
      concurrency, off: spread(rates.off), rows: spread(rates.rows), journal: spread(rates.journal), async: spread(rates.async),
      rowsRatio: spread(rates.rows.map((j, i) => j / rates.off[i])),
      ratio: spread(rates.journal.map((j, i) => j / rates.off[i])), asyncRatio: spread(rates.async.map((j, i) => j / rates.off[i]))
    }
    rows.push(row)
    console.error(`journal: concurrency ${concurrency}: off ${Math.round(row.off.median)} jobs/s, rows only ${Math.round(row.rows.median)} (${row.rowsRatio.median.toFixed(2)}), journal+once ${Math.round(row.journal.median)} (${row.ratio.median.toFixed(2)}), with synchronousCommit false ${Math.round(row.async.median)} (${row.asyncRatio.median.toFixed(2)})`)
  }
  const replays = []
  for (let run = 0; run < runs; run++) replays.push(await bulkReplay())
  replayRate = spread(replays)
  console.error(`journal: bulk replay ${Math.round(replayRate.median)} events/s`)
} finally {
  await queue.close()
  await redis.stop()
  await pool.end()
  await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
}

const markdown = [
  `${jobs} jobs per drain (about 1 KB of JSON each, the job data the ingress makes); the queue and the journal are emptied and refilled before`,
  'each side. **off**: `createWorker` with a no-op handler; **journal**: the same with `journal: { database }` and a handler that calls',
  '`event.once(\'record\', …)`, so each job writes its row (batched), opens a transaction, records an effect and commits the mark done.',
  '**rows**: the journal on with the no-op handler (the two batched row writes only). **async**: journal + once with `synchronousCommit: false` (the journal\'s own row writes commit without waiting for the disk; the handler\'s',
  `transaction still does). Jobs/s from the first completion to the last; ${runs} run(s), order alternated, median [min–max]; ratios per run. Target ≥ 0.7.`, '',
  '| concurrency | off jobs/s | rows jobs/s | rows / off | journal + once jobs/s | journal + once / off | async jobs/s | async / off |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.concurrency} | ${showSpread(r.off)} | ${showSpread(r.rows)} | ${showSpread(r.rowsRatio, 2)} | ${showSpread(r.journal)} | ${showSpread(r.ratio, 2)} | ${showSpread(r.async)} | ${showSpread(r.asyncRatio, 2)} |`),
  '',
  `Bulk replay, no rate limit: ${replayCount} failed events inserted by SQL, replayed by one run (pages of 200, each one transaction`,
  `with its \`addBulk\`): ${showSpread(replayRate)} events/s.`
]
emitSection({ id: 'journal', title: 'Event journal', markdown, data: { jobs, runs, rows, replayCount, replayRate } }, values)
