// The event journal: worker drain with the journal and `once()` on against off, and a bulk replay's
// events/s, in one run on a private redis-server and a database of its own on the machine's PostgreSQL
// (ANVIL_BENCH_PG_URL, else ANVIL_TEST_PG_URL, else postgres://postgres@127.0.0.1:5432/postgres; created and dropped here).
// The ingress is not measured here: with the journal written by the worker, the ingress path has no PostgreSQL.
// Side by side: graphile-worker 0.17.3 on the same database (bench/graphile-side.mjs).
// The PostgreSQL-native queue (`journal: { queue: 'postgres' }`, sides pgqueue and pgqueue-group): the same events queued
// in anvil.webhook_event_queue before the clock starts, claimed with FOR UPDATE SKIP LOCKED; no Redis per event.
// Usage: node bench/journal.mjs [--jobs 4000] [--rounds 3] [--warmup 1] [--sides journal,pgqueue,graphile] [--concurrency 16,50] [--group 25,5] [--replay 10000 | --skip-replay] [--quick]
import { randomUUID } from 'node:crypto'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import pg from 'pg'
import { Queue } from 'bullmq'
import { createWorker, migrate, openEventLog } from '../dist/index.js'
import { graphileDrain, graphileFill, graphileSetup } from './graphile-side.mjs'
import { benchArgs, benchDatabase, emitSection, postgresCpuSeconds, redisCpuSeconds, showSpread, spread, startRedis } from './lib.mjs'

const values = benchArgs({
  jobs: { type: 'string', default: '4000' },
  runs: { type: 'string', default: '3' },
  // Rounds: each round drains every side once, in alternating order (the same as --runs, which it overrides).
  rounds: { type: 'string' },
  concurrency: { type: 'string', default: '16,50' },
  // Group commit for the group side: maxEvents,maxWaitMs (maxEvents is capped at half the concurrency, so one group fills while another commits).
  group: { type: 'string', default: '25,5' },
  replay: { type: 'string', default: '10000' },
  // Drains only: no bulk replay.
  'skip-replay': { type: 'boolean', default: false },
  // Unmeasured rounds first (each side once, at each concurrency): the first drain of a process pays for its JIT and connections.
  warmup: { type: 'string', default: '1' },
  // A subset of the sides, e.g. to profile one: node --cpu-prof bench/journal.mjs --sides journal
  sides: { type: 'string', default: 'off,effect,rows,journal,async,group,pgqueue,pgqueue-group,graphile,graphile-batched' }
})
const sides = values.sides.split(',')
const jobs = values.quick ? 100 : Number(values.jobs)
const runs = values.quick ? 1 : Number(values.rounds ?? values.runs)
const warmup = values.quick ? 0 : Number(values.warmup)
// Quick: more than one page of the replay (200).
const replayCount = values['skip-replay'] ? 0 : values.quick ? 250 : Number(values.replay)
if (values.rounds !== undefined && !(Number.isInteger(Number(values.rounds)) && Number(values.rounds) > 0)) throw new Error(`--rounds takes a positive whole number, got ${values.rounds}`)
const concurrencies = values.concurrency.split(',').map(Number)
const [groupEvents, groupWaitMs] = values.group.split(',').map(Number)
const groupFor = (concurrency) => ({ maxEvents: Math.max(2, Math.min(groupEvents, Math.floor(concurrency / 2))), maxWaitMs: groupWaitMs })
const GRAPHILE = { graphile: false, 'graphile-batched': true }
/** The sides on the journal's PostgreSQL queue. */
const PGQUEUE = { pgqueue: false, 'pgqueue-group': true }
const GIVE_UP_MS = 180_000
const database = await benchDatabase('journal')
const { name: dbName, url: dbUrl } = database
await migrate(dbUrl)
// No idle timeout: a backend that ends mid-drain would take its CPU seconds out of the sum.
const pool = new pg.Pool({ connectionString: dbUrl, max: 12, idleTimeoutMillis: 0 })
// The effect a handler writes without the journal (the **effect** side): its key unique, as `webhook_effects`' is.
await pool.query('CREATE TABLE bench_effects (key text PRIMARY KEY, result jsonb, created_at timestamptz NOT NULL DEFAULT now())')
// The database is dropped with its connections at the end: an idle client's error then is expected.
pool.on('error', () => {})
if (sides.some((side) => side in GRAPHILE)) await graphileSetup(pool)
const redis = await startRedis()
const queue = new Queue('webhooks', { connection: { url: redis.url }, prefix: '{anvil}' })

/** The same N jobs the ingress would make (1 KB-ish JSON, headers, a signature), each with a new id and key. */
async function fill (side) {
  await redis.client.flushall()
  await pool.query('TRUNCATE anvil.webhook_events, anvil.webhook_event_failures, anvil.webhook_effects, anvil.webhook_event_queue, bench_effects')
  if (side in GRAPHILE) return await graphileFill(pool, jobs)
  if (side in PGQUEUE) return await pgQueueFill()
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

/** The same events as rows of the journal's queue, as the ingress inserts them (a schedule of one retry). */
async function pgQueueFill () {
  await pool.query(`INSERT INTO anvil.webhook_event_queue (job_id, dedupe_key, event_id, received_at, source, provider, event_type, provider_event_id,
      content_type, headers, signature, request_id, retry_schedule, payload)
    SELECT 'e_' || n, 'k_' || gen_random_uuid(), 'evt_' || n, now(), 'stripe', 'stripe', 'invoice.paid', 'evt_' || n, 'application/json',
      '{"content-type": "application/json", "stripe-signature": "t=1,v1=abc", "user-agent": "Stripe/1.0"}', 't=1,v1=abc', 'req_' || n, '{1000}',
      convert_to(json_build_object('id', 'evt_' || n, 'type', 'invoice.paid', 'data', json_build_object('object', json_build_object('amount', n, 'currency', 'eur', 'lines', repeat('x', 800))))::text, 'UTF8')
    FROM generate_series(0, $1 - 1) AS n`, [jobs])
  await pool.query('ANALYZE anvil.webhook_event_queue')
}

/**
 * CPU seconds so far of the three processes a drain uses: this one (the worker), redis-server and PostgreSQL;
 * and the WAL the server has written, in MB (so that per job it reads in bytes): the whole server's, so only
 * the bench's own on a server of its own (ANVIL_BENCH_PG_URL).
 */
async function cpuNow () {
  const usage = process.cpuUsage()
  const { rows: [wal] } = await pool.query("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS bytes")
  return { node: (usage.user + usage.system) / 1e6, redis: await redisCpuSeconds(redis.client), ...await postgresCpuSeconds(pool, dbName), wal: Number(wal.bytes) / 1e6 }
}

async function drain (side, concurrency) {
  let first = 0
  let last = 0
  let completed = 0
  let done
  const finished = new Promise((resolve) => { done = resolve })
  const onDone = (n) => {
    const now = performance.now()
    if (n === 1) first = now
    if (n === jobs) { last = now; done() }
  }
  if (side in GRAPHILE) return await graphile(side, concurrency, finished, onDone, () => ({ first, last }))
  // A pool of its own, sized as graphile-worker's (a client for each handler, and a few for the worker's own
  // statements): with fewer clients than handlers, the handlers would wait for a client, not for the database.
  const own = new pg.Pool({ connectionString: dbUrl, max: concurrency + 4, idleTimeoutMillis: 0 })
  own.on('error', () => {})
  const handler = side === 'off' || side === 'rows'
    ? async () => {}
    : side === 'effect'
      ? async (event) => { await own.query('INSERT INTO bench_effects (key, result) VALUES ($1, $2)', [`${event.eventId}:record`, { ok: true }]) }
      : async (event) => { await event.once('record', () => ({ ok: true })) }
  const journal = {
    database: own, retentionDays: 0, synchronousCommit: side !== 'async', ...(side === 'group' || side === 'pgqueue-group' ? { groupCommit: groupFor(concurrency) } : {}),
    ...(side in PGQUEUE ? { queue: 'postgres' } : {})
  }
  const worker = createWorker(handler, { redis: redis.url, concurrency, sweepIntervalMs: 0, ...(side === 'off' || side === 'effect' ? {} : { journal }) })
  // The PostgreSQL queue's jobs are not BullMQ's: their completions are the worker's `processed` diagnostics.
  const processed = () => onDone(++completed)
  if (side in PGQUEUE) subscribe('anvil:worker:processed', processed)
  else worker.worker.on('completed', processed)
  let failed = 0
  worker.worker.on('failed', (_job, err) => { if (failed++ === 0) console.error(`journal: ${side}: a job failed: ${err.message}`) })
  await worker.start()
  const before = await cpuNow()
  let timer
  try {
    await Promise.race([finished, new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`journal: ${side} completed ${completed} of ${jobs}`)), GIVE_UP_MS) })])
  } finally {
    clearTimeout(timer)
  }
  const after = await cpuNow()
  await worker.close()
  await own.end()
  if (side in PGQUEUE) unsubscribe('anvil:worker:processed', processed)
  const cpu = Object.fromEntries(Object.keys(before).map((k) => [k, (after[k] - before[k]) / jobs * 1e6]))
  if (failed > 0) throw new Error(`journal: ${failed} jobs failed on ${side}`)
  if (side === 'effect') {
    const { rows } = await pool.query('SELECT count(*) AS effects FROM bench_effects')
    if (Number(rows[0].effects) !== jobs) throw new Error(`journal: ${rows[0].effects} effects of ${jobs} on effect`)
  }
  if (side === 'journal' || side === 'async' || side === 'group' || side in PGQUEUE) {
    const { rows } = await pool.query("SELECT count(*) FILTER (WHERE status = 'done') AS done, (SELECT count(*) FROM anvil.webhook_effects) AS effects FROM anvil.webhook_events")
    if (Number(rows[0].done) !== jobs || Number(rows[0].effects) !== jobs) throw new Error(`journal: ${rows[0].done} rows done, ${rows[0].effects} effects of ${jobs}`)
  }
  return { rate: (jobs - 1) / ((last - first) / 1000), cpu }
}

/** A graphile-worker drain: its own pool, sized for its concurrency (each task's query takes a client). */
async function graphile (side, concurrency, finished, onDone, times) {
  const own = new pg.Pool({ connectionString: dbUrl, max: concurrency + 4, idleTimeoutMillis: 0 })
  own.on('error', () => {})
  const before = await cpuNow()
  const runner = await graphileDrain({ pool: own, concurrency, batched: GRAPHILE[side], onDone })
  let timer
  try {
    await Promise.race([finished, new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`journal: ${side} did not drain`)), GIVE_UP_MS) })])
  } finally {
    clearTimeout(timer)
  }
  const after = await cpuNow()
  await runner.stop()
  await own.end()
  const { rows } = await pool.query('SELECT count(*) AS effects FROM bench_effects')
  if (Number(rows[0].effects) !== jobs) throw new Error(`journal: ${rows[0].effects} effects of ${jobs} on ${side}`)
  const { first, last } = times()
  const cpu = Object.fromEntries(Object.keys(before).map((k) => [k, (after[k] - before[k]) / jobs * 1e6]))
  return { rate: (jobs - 1) / ((last - first) / 1000), cpu }
}

async function bulkReplay () {
  await redis.client.flushall()
  await pool.query('TRUNCATE anvil.webhook_events, anvil.webhook_event_failures, anvil.webhook_effects')
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

const SIDE_NOTES = {
  off: 'the journal off, a no-op handler',
  effect: 'the journal off, a handler that writes its effect row itself (one INSERT, autocommitted: one durable commit per event, at least once)',
  rows: 'the journal on, a no-op handler (the two batched row writes only)',
  journal: 'the journal on, a handler that calls `event.once(\'record\', …)` (a transaction per event: the claim, the row written once with its outcome `done`, the result, one commit)',
  async: 'journal + once with `synchronousCommit: false` (the journal\'s own batched row writes commit without waiting for the disk; the handler\'s transaction still does)',
  group: `journal + once with group commit (\`groupCommit: { maxEvents: min(${groupEvents}, concurrency / 2), maxWaitMs: ${groupWaitMs} }\`: a group\'s rows and effects in one statement with its commit)`,
  graphile: 'graphile-worker 0.17.3, its task writing the same effect row (autocommitted), a commit per job\'s completion',
  pgqueue: 'journal + once on the PostgreSQL queue (`journal: { queue: \'postgres\' }`): the events are rows of `webhook_event_queue` inserted before the clock, claimed in batches with `FOR UPDATE SKIP LOCKED`, each row deleted after its event\'s transaction (no Redis per event)',
  'pgqueue-group': 'pgqueue with the group side\'s group commit',
  'graphile-batched': 'the same with its batching: `localQueue: { size: 2 × concurrency }`, `completeJobBatchDelay: 0`'
}
/** The ratios the issue sets targets for: [a, b, target of a / b]. */
const PAIRS = [['journal', 'effect', 0.7], ['group', 'effect', 2], ['journal', 'graphile', 1], ['group', 'graphile-batched', 1],
  ['pgqueue', 'journal', 1], ['pgqueue', 'graphile', 1], ['pgqueue-group', 'group', 1], ['pgqueue-group', 'graphile-batched', 1], ['pgqueue-group', 'effect', 1]]
const rows = []
let replayRate
try {
  for (const concurrency of concurrencies) {
    const rates = Object.fromEntries(sides.map((side) => [side, []]))
    const cpu = Object.fromEntries(sides.map((side) => [side, []]))
    for (let run = -warmup; run < runs; run++) {
      for (const side of run % 2 === 0 ? sides : [...sides].reverse()) {
        await fill(side)
        const result = await drain(side, concurrency)
        if (run < 0) {
          console.error(`journal: c${concurrency} ${side}: warm-up, ${Math.round(result.rate)} jobs/s (not counted)`)
          continue
        }
        rates[side].push(result.rate)
        cpu[side].push(result.cpu)
        console.error(`journal: c${concurrency} ${side}: ${Math.round(result.rate)} jobs/s; CPU µs/job node ${Math.round(result.cpu.node)}, redis ${Math.round(result.cpu.redis)}, postgres ${Math.round(result.cpu.pg)} (+ background ${Math.round(result.cpu.pgBackground)})`)
      }
    }
    const total = (c) => c.node + c.redis + c.pg
    const row = { concurrency, sides: {} }
    for (const side of sides) {
      row.sides[side] = {
        rate: spread(rates[side]),
        // Per run, against the same run's off (and, for journal + once, its effect side): paired.
        ratio: rates.off === undefined ? undefined : spread(rates[side].map((r, i) => r / rates.off[i])),
        cpu: { node: spread(cpu[side].map((c) => c.node)), redis: spread(cpu[side].map((c) => c.redis)), pg: spread(cpu[side].map((c) => c.pg)), total: spread(cpu[side].map(total)), wal: spread(cpu[side].map((c) => c.wal)) },
        cpuRatio: cpu.off === undefined ? undefined : spread(cpu[side].map((c, i) => total(cpu.off[i]) / total(c)))
      }
    }
    // Paired ratios (per run): in jobs/s, a's over b's; in CPU per job, b's total over a's.
    row.pairs = PAIRS.filter(([a, b]) => rates[a] !== undefined && rates[b] !== undefined).map(([a, b, target]) => ({
      a, b, target, rate: spread(rates[a].map((r, i) => r / rates[b][i])), cpu: spread(cpu[a].map((c, i) => total(cpu[b][i]) / total(c)))
    }))
    rows.push(row)
    console.error(`journal: concurrency ${concurrency}: ${sides.map((side) => `${side} ${Math.round(row.sides[side].rate.median)} jobs/s${row.sides[side].ratio === undefined ? '' : ` (${row.sides[side].ratio.median.toFixed(2)})`}`).join(', ')}${row.pairs.map((p) => `; ${p.a} / ${p.b} ${p.rate.median.toFixed(2)}`).join('')}`)
  }
  // --skip-replay skips it.
  if (replayCount > 0) {
    const replays = []
    for (let run = 0; run < runs; run++) replays.push(await bulkReplay())
    replayRate = spread(replays)
    console.error(`journal: bulk replay ${Math.round(replayRate.median)} events/s`)
  }
} finally {
  await queue.close()
  await redis.stop()
  await pool.end()
  await database.drop()
}

const show = (value, digits = 0) => value === undefined ? '—' : showSpread(value, digits)
const markdown = [
  `${jobs} jobs per drain (about 1 KB of JSON each, the job data the ingress makes), \`createWorker\` at each concurrency; the queue and`,
  'the journal are emptied and refilled before each side. The sides:',
  ...sides.map((side) => `- **${side}**: ${SIDE_NOTES[side]};`),
  '',
  `Jobs/s from the first completion to the last; ${runs} run(s), order alternated, median [min–max]; ratios per run, against`,
  'the same run\'s off. CPU: µs per job of the worker process, redis-server and the bench database\'s PostgreSQL backends, summed;',
  '"CPU off / side" is off\'s total over the side\'s (per run). Target: journal + once ≥ 0.7 × off.', '',
  '| concurrency | side | jobs/s | / off | worker CPU µs | redis CPU µs | postgres CPU µs | total CPU µs | CPU off / side | WAL bytes |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...rows.flatMap((r) => sides.map((side) => {
    const x = r.sides[side]
    return `| ${r.concurrency} | ${side} | ${show(x.rate)} | ${show(x.ratio, 2)} | ${show(x.cpu.node)} | ${show(x.cpu.redis)} | ${show(x.cpu.pg)} | ${show(x.cpu.total)} | ${show(x.cpuRatio, 2)} | ${show(x.cpu.wal)} |`
  })),
  '', 'Paired ratios (per run, median [min–max]): jobs/s of the first over the second, and CPU per job (all three processes) of the',
  'second over the first (above 1: the first costs less).', '',
  '| concurrency | ratio | target | jobs/s | CPU per job |',
  '|---|---|---|---|---|',
  ...rows.flatMap((r) => r.pairs.map((p) => `| ${r.concurrency} | ${p.a} / ${p.b} | ≥ ${p.target} | ${show(p.rate, 2)} | ${show(p.cpu, 2)} |`)),
  '',
  ...(replayRate === undefined ? ['Bulk replay: not run (`--skip-replay`).'] : [
    `Bulk replay, no rate limit: ${replayCount} failed events inserted by SQL, replayed by one run (pages of 200, each one transaction`,
    `with its \`addBulk\`): ${showSpread(replayRate)} events/s.`])
]
emitSection({ id: 'journal', title: 'Event journal', markdown, data: { jobs, runs, rows, replayCount, replayRate } }, values)
