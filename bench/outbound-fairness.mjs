// Outbound fairness between tenants (issue 33): a quiet tenant's delivery latency alone and beside a noisy tenant.
// Real processes: `anvil serve` (admin API, the portal token's requests) and `anvil worker` (dispatch and delivery,
// concurrency 10), PostgreSQL, a private redis-server, the noisy endpoints' receiver in its own process. The quiet
// tenant publishes 8 messages at 4/s to one endpoint whose receiver, in this process, notes each arrival; latency is
// publish → arrival. Beside it the noisy tenant (a process of its own, bench/servers/fairness-noisy.mjs) sends 300
// concurrent `POST /admin/deliveries/:id/retry` with a write portal token for one delivery of its healthy endpoint,
// then publishes 10 messages to its 300 endpoints (3,000 deliveries); the quiet tenant starts as that burst is
// published, so its messages are queued beside it. Rounds are paired (alone and beside, the order alternated); the ratio p99 beside / p99 alone is per
// round (target ≤ 2). Deadlocks: pg_stat_database.deadlocks of the bench's database over the run, and the worker's
// `deadlock detected` lines. CPU per delivery of the worker and of PostgreSQL's backends, beside.
// Usage: node bench/outbound-fairness.mjs [--rounds 5] [--workers 1] [--concurrency 10] [--quick]
import { fork, spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { loadavg } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { Queue } from 'bullmq'
import { createOutbound } from '../dist/index.js'
import { migrate } from '../dist/src/db/migrate.js'
import { benchArgs, benchDatabase, emitSection, postgresCpuSeconds, processCpuSeconds, quantile, showSpread, spread, startRedis, startServer, track } from './lib.mjs'

const values = benchArgs({
  rounds: { type: 'string', default: '5' },
  workers: { type: 'string', default: '1' },
  concurrency: { type: 'string', default: '10' }
})
const quick = values.quick
const rounds = quick ? 1 : Number(values.rounds)
const QUIET = quick ? 4 : 8
const QUIET_RATE = quick ? 8 : 4
const RETRIES = quick ? 10 : 300
const NOISY_ENDPOINTS = quick ? 5 : 300
const NOISY_MESSAGES = quick ? 2 : 10
const ADMIN_TOKEN = 'admin-token-of-the-fairness-bench'
const CLI = new URL('../dist/cli/anvil.js', import.meta.url).pathname
const GIVE_UP_MS = 300_000

/** A CLI process whose JSON log lines are kept; `line(msg)` waits for one. */
function startCli (args, env) {
  const child = track(spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'inherit'] }))
  const lines = []
  let partial = ''
  child.stdout.on('data', (chunk) => {
    const parts = (partial + chunk.toString('utf8')).split('\n')
    partial = parts.pop() ?? ''
    for (const text of parts) { try { lines.push(JSON.parse(text)) } catch { lines.push({ msg: text }) } }
  })
  return {
    child,
    lines,
    async line (msg) {
      for (let i = 0; i < 1200; i++) {
        const found = lines.find((entry) => entry.msg === msg)
        if (found !== undefined) return found
        if (child.exitCode !== null) break
        await sleep(50)
      }
      throw new Error(`${args[0]}: no "${msg}" line`)
    },
    async stop () {
      const done = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await Promise.race([done, sleep(10_000)])
      child.kill('SIGKILL')
    }
  }
}

const redis = await startRedis()
const database = await benchDatabase('fairness')
await migrate(database.url)
const pool = new pg.Pool({ connectionString: database.url, max: 2 })
const noisyReceiver = await startServer({ module: new URL('./servers/outbound-receiver.mjs', import.meta.url).pathname })

// The quiet tenant's receiver, here: the arrival time of each message.
const arrivals = new Map()
const quietServer = createServer((req, res) => {
  req.resume()
  req.on('end', () => { arrivals.set(String(req.headers['webhook-id']), performance.now()); res.statusCode = 204; res.end() })
})
await new Promise((resolve) => quietServer.listen(0, '127.0.0.1', resolve))
const quietUrl = `http://127.0.0.1:${quietServer.address().port}/quiet`

const env = { REDIS_URL: redis.url, ANVIL_DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' }
// The noisy tenant's storm is the point: its portal token's per-minute limits are raised past it.
const serve = startCli(['serve'], { ...env, WEBHOOK_SECRET: 'whsec_fairness_bench_0123456789', ANVIL_ADMIN_TOKEN: ADMIN_TOKEN, ANVIL_PORTAL_LIMITS: 'retriesPerMinute=100000,writesPerMinute=100000' })
const workers = Array.from({ length: Number(values.workers) }, () =>
  startCli(['worker'], { ...env, WORKER_CONCURRENCY: values.concurrency, ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.0/8' }))
const admin = `http://127.0.0.1:${(await serve.line('anvil serve: listening')).port}/admin`
for (const worker of workers) await worker.line('anvil worker: dispatching and delivering outgoing webhooks')

const outbound = createOutbound({ database: database.url, redis: redis.url })
const queue = new Queue('outbound', { connection: { url: redis.url }, prefix: '{anvil}' })
await outbound.endpoints.create({ url: quietUrl, tenant: 'quiet', eventTypes: ['order.paid'] })
const healthy = await outbound.endpoints.create({ url: `${noisyReceiver.url}/noisy/healthy`, tenant: 'noisy', eventTypes: ['retry.me'] })
for (let i = 0; i < NOISY_ENDPOINTS; i++) await outbound.endpoints.create({ url: `${noisyReceiver.url}/noisy/${i}`, tenant: 'noisy', eventTypes: ['order.paid'] })
const { messageId: retried } = await outbound.publish({ type: 'retry.me', data: { n: 1 }, tenant: 'noisy' })
let deliveryId
for (let i = 0; i < 1200 && deliveryId === undefined; i++) {
  deliveryId = (await pool.query("SELECT id FROM anvil.deliveries WHERE message_id = $1 AND status = 'success'", [retried])).rows[0]?.id
  if (deliveryId === undefined) await sleep(50)
}
if (deliveryId === undefined) throw new Error('the noisy tenant\'s first delivery never succeeded')
const portal = await fetch(`${admin}/portal/tokens`, {
  method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ tenant: 'noisy', scopes: ['read', 'write'] })
})
const { token } = await portal.json()

async function drained () {
  for (const started = Date.now(); Date.now() - started < GIVE_UP_MS; await sleep(100)) {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
    const { rows } = await pool.query("SELECT (SELECT count(*) FROM anvil.outbox WHERE status = 'pending') + (SELECT count(*) FROM anvil.deliveries WHERE status = 'started') AS n")
    if (Object.values(counts).every((n) => n === 0) && Number(rows[0].n) === 0) return
  }
  throw new Error('the queue did not drain')
}

/** The quiet tenant's messages at its rate; resolves with their latencies (ms) once all arrived. */
async function quietRun () {
  const sent = []
  for (let i = 0; i < QUIET; i++) {
    const at = performance.now()
    const { messageId } = await outbound.publish({ type: 'order.paid', data: { i }, tenant: 'quiet' })
    sent.push({ messageId, at })
    await sleep(Math.max(0, 1000 / QUIET_RATE - (performance.now() - at)))
  }
  for (const started = Date.now(); sent.some(({ messageId }) => !arrivals.has(messageId)); await sleep(5)) {
    if (Date.now() - started > GIVE_UP_MS) throw new Error('the quiet tenant\'s messages did not all arrive')
  }
  return { latencies: sent.map(({ messageId, at }) => arrivals.get(messageId) - at), ids: sent.map(({ messageId }) => messageId) }
}

/** Where a quiet message's time went, by PostgreSQL's clock: publish → dispatched (the outbox), dispatched → its attempt started (the queue). */
async function stages (ids) {
  const { rows } = await pool.query(`SELECT extract(epoch FROM o.dispatched_at - o.created_at) * 1000 AS dispatch,
      extract(epoch FROM d.created_at - o.dispatched_at) * 1000 AS queue
    FROM anvil.outbox o JOIN anvil.deliveries d ON d.message_id = o.id WHERE o.id = ANY($1)`, [ids])
  return { dispatch: rows.map((r) => Number(r.dispatch)), queue: rows.map((r) => Number(r.queue)) }
}

// The noisy tenant drives its requests from a process of its own (bench/servers/fairness-noisy.mjs).
const noisy = track(fork(new URL('./servers/fairness-noisy.mjs', import.meta.url).pathname, [], {
  env: { ...process.env, DATABASE_URL: database.url, REDIS_URL: redis.url }, stdio: ['ignore', 'ignore', 'inherit', 'ipc']
}))
await new Promise((resolve) => noisy.once('message', resolve))

/** The noisy tenant: the hand-retry storm, then its burst; `stormed` once the storm is answered, `done` with the retries' statuses. */
function noisyRun () {
  const messages = []
  const next = () => new Promise((resolve) => noisy.once('message', (message) => { messages.push(message); resolve(message) }))
  const stormed = next()
  const done = stormed.then(next).then((message) => message.statuses)
  noisy.send({ admin, token, deliveryId, retries: RETRIES, messages: NOISY_MESSAGES })
  return { stormed, done }
}

const cpu = () => ({ worker: workers.reduce((sum, w) => sum + processCpuSeconds(w.child.pid), 0), serve: processCpuSeconds(serve.child.pid) })
const deliveriesLogged = async () => Number((await pool.query('SELECT count(*) FROM anvil.deliveries')).rows[0].count)
const deadlocks = async () => Number((await pool.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')).rows[0].deadlocks)
const deadlocksBefore = await deadlocks()

async function side (beside) {
  await drained()
  const before = { ...cpu(), pg: (await postgresCpuSeconds(pool, database.name)).pg, rows: await deliveriesLogged() }
  // Beside: the quiet tenant's messages go as the noisy burst is published, after the storm's answers.
  const noisyTenant = beside ? noisyRun() : { stormed: Promise.resolve(), done: Promise.resolve([]) }
  await noisyTenant.stormed
  const [{ latencies, ids }, answers] = await Promise.all([quietRun(), noisyTenant.done])
  await drained()
  const where = await stages(ids)
  const after = { ...cpu(), pg: (await postgresCpuSeconds(pool, database.name)).pg, rows: await deliveriesLogged() }
  const sorted = [...latencies].sort((a, b) => a - b)
  const attempts = Math.max(1, after.rows - before.rows)
  return {
    latencies,
    where,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    statuses: answers.reduce((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {}),
    attempts,
    workerUs: ((after.worker - before.worker) * 1e6) / attempts,
    pgUs: ((after.pg - before.pg) * 1e6) / attempts
  }
}

// One unmeasured round of each side first: the JIT's warm-up and the first connections fall on no measured round.
if (!quick) { await side(false); await side(true) }
const alone = []
const beside = []
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? [false, true] : [true, false]
  for (const withNoisy of order) (withNoisy ? beside : alone).push(await side(withNoisy))
}
const ratios = alone.map((a, i) => beside[i].p99 / a.p99)
const deadlockLines = workers.reduce((sum, w) => sum + w.lines.filter((entry) => String(entry.err ?? '').includes('deadlock detected')).length, 0)
for (const worker of workers) await worker.stop()
await serve.stop()
// A backend's counters reach pg_stat_database when it ends: read once the worker's connections are closed.
await sleep(1500)
const deadlocksSeen = (await deadlocks()) - deadlocksBefore

const all = (sides) => {
  const sorted = sides.flatMap((s) => s.latencies).sort((a, b) => a - b)
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }
}
const row = (label, sides) => {
  const whole = all(sides)
  return `| ${label} | ${showSpread(spread(sides.map((s) => s.p50)), 1)} | ${showSpread(spread(sides.map((s) => s.p99)), 1)} | ${whole.p50.toFixed(1)} | ${whole.p99.toFixed(1)} |`
}
const stage = (sides, name) => {
  const sorted = sides.flatMap((s) => s.where[name]).sort((a, b) => a - b)
  return `${quantile(sorted, 0.5).toFixed(0)}/${quantile(sorted, 0.99).toFixed(0)}`
}
const statuses = beside.reduce((sum, s) => { for (const [k, v] of Object.entries(s.statuses)) sum[k] = (sum[k] ?? 0) + v; return sum }, {})
emitSection({
  title: 'Outbound fairness between tenants',
  markdown: [
    `The quiet tenant: ${QUIET} messages at ${QUIET_RATE}/s to one endpoint, publish → arrival, ms. Beside: the noisy tenant's ${RETRIES} concurrent hand retries of one delivery (a write portal token), then ${NOISY_MESSAGES} messages to its ${NOISY_ENDPOINTS} endpoints, the quiet tenant starting with that burst. ${workers.length} \`anvil worker\` at concurrency ${values.concurrency}; ${rounds} paired round(s).`,
    '',
    '| quiet tenant | p50 per round, median (min–max) | p99 per round, median (min–max) | p50, all rounds | p99, all rounds |',
    '|---|---|---|---|---|',
    row('alone', alone),
    row(`beside the noisy tenant (${NOISY_ENDPOINTS} × ${NOISY_MESSAGES} deliveries, ${RETRIES} retries)`, beside),
    '',
    `p99 beside / p99 alone per round: ${showSpread(spread(ratios), 2)}. Deadlocks: ${deadlocksSeen} in pg_stat_database, ${deadlockLines} \`deadlock detected\` lines. Hand retries answered: ${Object.entries(statuses).map(([k, v]) => `${v} × ${k}`).join(', ')}.`,
    `Where the quiet tenant's time went, p50/p99 of all rounds, ms: publish → dispatched ${stage(alone, 'dispatch')} alone, ${stage(beside, 'dispatch')} beside; dispatched → attempt started ${stage(alone, 'queue')} alone, ${stage(beside, 'queue')} beside.`,
    `CPU per delivery attempt beside: worker ${showSpread(spread(beside.map((s) => s.workerUs)))} µs, PostgreSQL ${showSpread(spread(beside.map((s) => s.pgUs)))} µs (${showSpread(spread(beside.map((s) => s.attempts)))} attempts a round). Load average ${loadavg().map((n) => n.toFixed(1)).join(' ')}.`
  ]
}, values)

noisy.kill('SIGTERM')
await queue.close()
await outbound.close()
await pool.end()
await noisyReceiver.stop()
quietServer.closeAllConnections()
quietServer.close()
await database.drop()
await redis.stop()
process.exit(0)
