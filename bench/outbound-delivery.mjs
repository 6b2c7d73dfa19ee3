// Outbound delivery: deliveries/s of Anvil's delivery worker (`createDeliveryWorker`: endpoint lookup, circuit
// breaker check, Standard Webhooks signature, SSRF-guarded undici POST, answer capped) against a floor, a raw
// BullMQ Worker doing a plain undici POST of the same body to the same receiver at the same concurrency, at 1
// and 10 endpoints. Then the isolation case: one endpoint hanging for the whole timeout beside nine healthy
// ones, at a fixed offered rate, with the circuit breaker and without; the healthy deliveries' p50/p99.
// The receiver runs in its own process; in those drains the delivery log is a no-op store (the engine alone).
// Then the delivery log's true cost (bench/outbound-log-side.mjs): the worker on its PostgreSQL store beside
// graphile-worker 0.17.3 doing the same signed POST, a commit per job and batched, in paired rounds.
// Usage: node bench/outbound-delivery.mjs [--jobs 5000] [--runs 3] [--concurrency 10] [--endpoints 1,10]
//   [--rate 200] [--seconds 20] [--hang-timeout 10000] [--log-sides anvil,anvil-log,graphile,graphile-batched]
//   [--pool 5] [--no-log] [--no-engine] [--no-isolation] [--quick]
import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import { Agent, request } from 'undici'
import { createDeliveryWorker } from '../dist/index.js'
import { deliveryJobOptions, resolveSchedule } from '../dist/src/delivery/delivery-schedule.js'
import { benchArgs, emitSection, memoryDeliveryStore, showSpread, spread, startRedis, startServer, settleLatencies } from './lib.mjs'
import { LOG_SIDES, logSetup } from './outbound-log-side.mjs'

const values = benchArgs({
  jobs: { type: 'string', default: '5000' },
  runs: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '10' },
  endpoints: { type: 'string', default: '1,10' },
  rate: { type: 'string', default: '200' },
  seconds: { type: 'string', default: '20' },
  'hang-timeout': { type: 'string', default: '10000' },
  /** The delivery worker's per-endpoint cap in the throughput drains; the isolation case keeps the default. */
  'max-in-flight': { type: 'string' },
  /** Only the paired drains (CPU per delivery and deliveries/s), not the isolation case. */
  /** The per-endpoint cap of the isolation case (the worker's default when not given). */
  'isolation-max-in-flight': { type: 'string' },
  'no-isolation': { type: 'boolean', default: false },
  /** The delivery log's sides (bench/outbound-log-side.mjs); none with --no-log. */
  'log-sides': { type: 'string', default: 'anvil,anvil-log,graphile,graphile-batched' },
  'no-log': { type: 'boolean', default: false },
  /** Only the delivery log's rounds (and the isolation case unless --no-isolation): not the no-op store's drains. */
  'no-engine': { type: 'boolean', default: false },
  /** PostgreSQL connections of each log side (Anvil's store, graphile-worker's pool): the same for both. */
  pool: { type: 'string', default: '5' },
  /** Unmeasured drains of each side first, so the JIT's warm-up falls on neither side's first measured run. */
  warmup: { type: 'string', default: '1' }
})
const maxInFlightPerEndpoint = values['max-in-flight'] === undefined ? undefined : Number(values['max-in-flight'])
const quick = values.quick
const jobs = quick ? 50 : Number(values.jobs)
const runs = quick ? 1 : Number(values.runs)
const concurrency = Number(values.concurrency)
const endpointCounts = values.endpoints.split(',').map(Number)
const rate = quick ? 20 : Number(values.rate)
const seconds = quick ? 1 : Number(values.seconds)
const hangTimeoutMs = quick ? 500 : Number(values['hang-timeout'])
const PREFIX = '{anvil}'
const SECRET = 'whsec_' + Buffer.alloc(32, 7).toString('base64')
const GIVE_UP_MS = 300_000

const redis = await startRedis()
const receiver = await startServer({ module: new URL('./servers/outbound-receiver.mjs', import.meta.url).pathname })

const store = memoryDeliveryStore(SECRET)

const body = (i) => JSON.stringify({ id: `msg_${i}`, type: 'invoice.paid', timestamp: new Date().toISOString(), data: { invoice: `in_${i}`, amount: 1000 + i, currency: 'eur' } })
const jobData = (i, endpoints, path = (e) => `/ep_${e}`) => {
  const e = i % endpoints
  return { messageId: `msg_${i}`, endpointId: `ep_${e}`, eventType: 'invoice.paid', url: receiver.url + path(e), body: body(i), scheme: 'standard-webhooks' }
}

async function fill (queue, endpoints) {
  await redis.client.flushall()
  const options = deliveryJobOptions(resolveSchedule())
  for (let i = 0; i < jobs; i += 500) {
    await queue.addBulk(Array.from({ length: Math.min(500, jobs - i) }, (_, k) => ({ name: 'deliver', data: jobData(i + k, endpoints), opts: { ...options, removeOnComplete: true } })))
  }
}

/** Runs one side over a filled queue; deliveries/s from the first completion to the last. */
async function drain (side, queueName) {
  let first = 0
  let last = 0
  let cpuFirst
  let cpu
  let completed = 0
  let failed = 0
  let done
  const finished = new Promise((resolve) => { done = resolve })
  const onCompleted = () => {
    const now = performance.now()
    if (completed === 0) { first = now; cpuFirst = process.cpuUsage() }
    if (++completed === jobs) { last = now; cpu = process.cpuUsage(cpuFirst); done() }
  }
  let close
  if (side === 'anvil') {
    const worker = createDeliveryWorker({ redis: redis.url, store, queueName, prefix: PREFIX, concurrency, allowNets: '127.0.0.0/8', ...(maxInFlightPerEndpoint === undefined ? {} : { maxInFlightPerEndpoint }) })
    worker.worker.on('completed', onCompleted)
    worker.worker.on('failed', () => { failed++ })
    await worker.start()
    close = () => worker.close()
  } else {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null })
    const dispatcher = new Agent()
    const worker = new Worker(queueName, async (job) => {
      const response = await request(job.data.url, { method: 'POST', body: job.data.body, headers: { 'content-type': 'application/json' }, dispatcher })
      await response.body.dump()
      if (response.statusCode >= 300) throw new Error(`HTTP ${response.statusCode}`)
    }, { connection, prefix: PREFIX, concurrency })
    worker.on('completed', onCompleted)
    worker.on('failed', () => { failed++ })
    close = async () => { await worker.close(); await dispatcher.close(); connection.disconnect() }
  }
  let timer
  try {
    const expired = new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`outbound: ${side} completed ${completed} of ${jobs}`)), GIVE_UP_MS) })
    await Promise.race([finished, expired])
  } finally {
    clearTimeout(timer)
    await close()
  }
  if (failed > 0) throw new Error(`outbound: ${failed} deliveries failed on ${side}`)
  // This process's CPU (user + system) per delivery from the first completion to the last: the worker's own cost,
  // steadier on a shared machine than deliveries/s (the receiver and Redis run in other processes).
  return { rate: (jobs - 1) / ((last - first) / 1000), cpuUs: (cpu.user + cpu.system) / (jobs - 1) }
}

/** One endpoint of ten hangs; jobs offered at `rate`/s for `seconds`; the healthy endpoints' enqueue → completed latency. */
async function isolation (circuit) {
  await redis.client.flushall()
  const queueName = 'isolation'
  const queue = new Queue(queueName, { connection: { url: redis.url }, prefix: PREFIX })
  const latencies = []
  const worker = createDeliveryWorker({
    redis: redis.url, store, queueName, prefix: PREFIX, concurrency, allowNets: '127.0.0.0/8', timeoutMs: hangTimeoutMs,
    circuit: circuit ? { failureThreshold: 3, openMs: 60_000 } : false,
    ...(values['isolation-max-in-flight'] === undefined ? {} : { maxInFlightPerEndpoint: Number(values['isolation-max-in-flight']) })
  })
  worker.worker.on('completed', (job) => {
    if (job.data.endpointId !== 'ep_0') latencies.push(job.finishedOn - job.timestamp)
  })
  await worker.start()
  const total = rate * seconds
  const started = performance.now()
  const options = { attempts: 2, backoff: { type: 'anvil-outbound' }, removeOnComplete: true, removeOnFail: true }
  for (let i = 0; i < total; i++) {
    // Open loop: each job goes at its time, whatever the worker does.
    const due = started + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    // One retry a minute later: the job carries its schedule, as the outbox's fan-out writes it.
    await queue.add('deliver', { ...jobData(i, 10, (e) => e === 0 ? '/hang' : `/ep_${e}`), retry: [60_000] }, options)
  }
  const healthy = total - Math.ceil(total / 10)
  return await settleLatencies({ latencies, healthy, worker, queue, giveUpMs: GIVE_UP_MS })
}

// Quick: enough to show each side runs (bench-smoke runs it inside run.mjs); the log side is the slowest by far.
const logJobs = quick ? 20 : jobs
const logSides = values['no-log'] ? [] : values['log-sides'].split(',').filter((side) => side !== '')
for (const side of logSides) if (!(side in LOG_SIDES)) throw new Error(`--log-sides takes ${Object.keys(LOG_SIDES).join(', ')}; got ${side}`)

/** Paired rounds of the log sides, order rotated each round, at each endpoint count. */
async function logRounds () {
  const log = await logSetup({ redis, receiverUrl: receiver.url, endpoints: Math.max(...endpointCounts), poolSize: Number(values.pool), prefix: PREFIX, queueName: 'outbound_log' })
  try {
    for (const endpoints of endpointCounts) {
      const rates = Object.fromEntries(logSides.map((side) => [side, []]))
      const cpus = Object.fromEntries(logSides.map((side) => [side, []]))
      for (let run = -(quick ? 0 : Number(values.warmup)); run < runs; run++) {
        const shift = ((run % logSides.length) + logSides.length) % logSides.length
        for (const side of [...logSides.slice(shift), ...logSides.slice(0, shift)]) {
          await redis.client.flushall()
          const queue = new Queue('outbound_log', { connection: { url: redis.url }, prefix: PREFIX })
          await log.fill(side, queue, logJobs, endpoints)
          await queue.close()
          const result = await log.drain(side, { jobs: logJobs, concurrency, queueName: 'outbound_log', giveUpMs: GIVE_UP_MS })
          if (run < 0) continue
          rates[side].push(result.rate)
          cpus[side].push(result.cpu)
          console.error(`outbound log: ${endpoints} endpoint(s) ${side}: ${Math.round(result.rate)}/s; CPU µs/delivery node ${Math.round(result.cpu.node)}, redis ${Math.round(result.cpu.redis)}, postgres ${Math.round(result.cpu.pg)}`)
        }
      }
      const base = logSides.includes('graphile-batched') ? 'graphile-batched' : undefined
      for (const side of logSides) {
        const of = (key) => spread(cpus[side].map((c) => c[key]))
        logRows.push({
          endpoints, side, rate: spread(rates[side]),
          ratio: base === undefined ? undefined : spread(rates[side].map((r, i) => r / rates[base][i])),
          cpu: { node: of('node'), redis: of('redis'), pg: of('pg'), total: of('total') }
        })
      }
    }
  } finally {
    await log.close()
  }
}

const rows = []
const isolationRows = []
const logRows = []
try {
  for (const endpoints of values['no-engine'] ? [] : endpointCounts) {
    const rates = { anvil: [], floor: [] }
    const cpus = { anvil: [], floor: [] }
    for (let run = -(quick ? 0 : Number(values.warmup)); run < runs; run++) {
      for (const side of run % 2 === 0 ? ['anvil', 'floor'] : ['floor', 'anvil']) {
        const queueName = `outbound_${side}`
        const queue = new Queue(queueName, { connection: { url: redis.url }, prefix: PREFIX })
        await fill(queue, endpoints)
        await queue.close()
        const result = await drain(side, queueName)
        if (run < 0) continue
        rates[side].push(result.rate)
        cpus[side].push(result.cpuUs)
      }
    }
    const row = {
      endpoints,
      anvil: spread(rates.anvil),
      floor: spread(rates.floor),
      ratio: spread(rates.anvil.map((a, i) => a / rates.floor[i])),
      anvilCpu: spread(cpus.anvil),
      floorCpu: spread(cpus.floor),
      cpuRatio: spread(cpus.floor.map((f, i) => f / cpus.anvil[i]))
    }
    rows.push(row)
    console.error(`outbound: ${endpoints} endpoint(s): anvil ${Math.round(row.anvil.median)}/s ${Math.round(row.anvilCpu.median)} µs CPU, floor ${Math.round(row.floor.median)}/s ${Math.round(row.floorCpu.median)} µs CPU, ratio ${row.ratio.median.toFixed(2)} (CPU floor/anvil ${row.cpuRatio.median.toFixed(2)}) [anvil CPU ${cpus.anvil.map(Math.round).join(',')}; floor ${cpus.floor.map(Math.round).join(',')}]`)
  }
  if (logSides.length > 0) await logRounds()
  for (const circuit of values['no-isolation'] ? [] : [true, false]) {
    const result = await isolation(circuit)
    isolationRows.push({ circuit, ...result })
    console.error(`outbound isolation (circuit ${circuit ? 'on' : 'off'}): healthy p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.delivered}/${result.healthy}`)
  }
} finally {
  await receiver.stop()
  await redis.stop()
}

const markdown = [
  `${jobs} deliveries per drain at concurrency ${concurrency}, to a receiver in its own process answering 204. **anvil**: \`createDeliveryWorker\``,
  '(endpoint lookup from memory, circuit check in Redis, Standard Webhooks signature, SSRF-guarded undici POST, answer capped; the',
  'delivery log a no-op). **floor**: a raw BullMQ `Worker` doing an undici POST of the same body. Deliveries/s from the first completion',
  `to the last; ${runs} paired run(s), order alternated, median [min–max]; the ratio is per run (target ≥ 0.9). Per-endpoint cap:`,
  `${maxInFlightPerEndpoint ?? 'the default (adaptive: half the concurrency while several endpoints are active, all of it for one)'}.`, '',
  'CPU µs per delivery: this process (the worker) from the first completion to the last; floor / anvil per run.', '',
  '| endpoints | anvil deliveries/s | floor deliveries/s | anvil / floor | anvil CPU µs/delivery | floor CPU µs/delivery | CPU floor / anvil |',
  '|---|---|---|---|---|---|---|'
]
for (const r of rows) markdown.push(`| ${r.endpoints} | ${showSpread(r.anvil)} | ${showSpread(r.floor)} | ${showSpread(r.ratio, 2)} | ${showSpread(r.anvilCpu)} | ${showSpread(r.floorCpu)} | ${showSpread(r.cpuRatio, 2)} |`)
markdown.push('', `Isolation: ten endpoints, one never answering (timeout ${hangTimeoutMs} ms), ${rate} jobs/s offered for ${seconds} s at concurrency`,
  `${concurrency}; enqueue → completed of the nine healthy endpoints' deliveries (target p99 < 1 s with the circuit breaker).`, '',
  '| circuit breaker (per-endpoint cap: the default) | healthy delivered | p50 ms | p99 ms | max ms |', '|---|---|---|---|---|')
for (const r of isolationRows) markdown.push(`| ${r.circuit ? 'on (3 failures, 60 s open)' : 'off (the per-endpoint cap alone)'} | ${r.delivered}/${r.healthy} | ${r.p50} | ${r.p99} | ${r.max} |`)
if (logRows.length > 0) {
  markdown.push('', `The delivery log's true cost: ${logJobs} deliveries per drain at concurrency ${concurrency}, ${runs} paired round(s), the sides' order rotated`,
    'each round. **anvil**: `createDeliveryWorker` on a no-op store (the delivery log off). **anvil-log**: on its PostgreSQL store (endpoint',
    'and secrets read through its cache, each attempt a `started` row before its POST and its outcome after). **graphile**: graphile-worker 0.17.3, its task doing the same Standard Webhooks',
    'signed POST of the same body (the secret from memory), its completion a commit per job; **graphile-batched**: the same with',
    `\`localQueue: { size: 2 × concurrency }\`, \`completeJobBatchDelay: 0\`. Each side's PostgreSQL pool: ${values.pool} connections. CPU µs per`,
    "delivery over the drain: this process (node), redis-server, and the backends of the bench's own database (PostgreSQL's background",
    'writers not counted). Ratio: deliveries/s against graphile-batched in the same round (target for anvil-log ≥ 1.0).', '',
    '| endpoints | side | deliveries/s | × graphile-batched | node µs | redis µs | PostgreSQL µs | total µs |', '|---|---|---|---|---|---|---|---|')
  for (const r of logRows) markdown.push(`| ${r.endpoints} | ${r.side} | ${showSpread(r.rate)} | ${r.ratio === undefined ? '–' : showSpread(r.ratio, 2)} | ${showSpread(r.cpu.node)} | ${showSpread(r.cpu.redis)} | ${showSpread(r.cpu.pg)} | ${showSpread(r.cpu.total)} |`)
}
emitSection({ id: 'outbound-delivery', title: 'Outbound delivery', markdown, data: { jobs, logJobs, runs, concurrency, rows, isolationRows, logRows } }, values)
