// End to end at a fixed offered rate: from a request's send (open loop, its send time in the body) to the start
// of the handler in `anvil worker`, through `anvil serve` and a private redis-server, all separate processes.
// Also the requests' own latency at that rate, the rate achieved and how many accepted events never reached
// the handler (must be 0).
// Usage: node bench/e2e.mjs [--rate 1000] [--duration 30] [--runs 3] [--quick]
import { fork } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { benchArgs, emitSection, forkTracked, quantile, showSpread, spread, startRedis, startServer, track } from './lib.mjs'

const values = benchArgs({
  rate: { type: 'string', default: '1000' },
  duration: { type: 'string', default: '30' },
  runs: { type: 'string', default: '3' }
})
const rate = values.quick ? 200 : Number(values.rate)
const duration = values.quick ? 0.5 : Number(values.duration)
/** The warm-up's seconds at 100/s: 50 events, 10 in a quick run. */
const warmupSeconds = values.quick ? 0.1 : 0.5
const runs = values.quick ? 1 : Number(values.runs)
const secret = 'whsec_bench_0123456789'
const cli = new URL('../dist/cli/anvil.js', import.meta.url).pathname
/** How long after the last answer the handler has to see every accepted event before it counts as lost. */
const SETTLE_MS = 15_000

async function generate (options) {
  const child = track(fork(new URL('./e2e-load.mjs', import.meta.url), [JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] }))
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  if (code !== 0) throw new Error(`e2e: generator exited with ${code}`)
  return JSON.parse(out)
}

/** Waits until `done()` or `ms` pass, checking every 50 ms. */
async function until (done, ms) {
  for (const end = Date.now() + ms; !done() && Date.now() < end;) await sleep(50)
  return done()
}

async function oneRun (redis, run) {
  await redis.client.flushall()
  const env = { REDIS_URL: redis.url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'warn', HOST: '127.0.0.1' }
  const serve = await startServer({ module: cli, args: ['serve'], env })
  const worker = forkTracked(cli, ['worker', '--handler', new URL('./e2e-handler.mjs', import.meta.url).pathname], { ...env, PORT: '0' })
  const handled = new Map()
  worker.child.on('message', (batch) => { for (const [id, ms] of batch) if (!handled.has(id)) handled.set(id, ms) })
  try {
    // A warm-up that also tells when the worker is taking jobs; its events are not counted.
    const warm = await generate({ url: serve.url, secret, rate: 100, duration: warmupSeconds, prefix: `warm${run}_` })
    if (!await until(() => warm.accepted.every((id) => handled.has(id)), 30_000)) throw new Error('e2e: the worker did not handle the warm-up events')
    const load = await generate({ url: serve.url, secret, rate, duration, prefix: `e2e${run}_` })
    await until(() => load.accepted.every((id) => handled.has(id)), SETTLE_MS)
    const seen = load.accepted.filter((id) => handled.has(id))
    const latencies = seen.map((id) => handled.get(id)).sort((a, b) => a - b)
    return {
      sent: load.sent,
      accepted: load.accepted.length,
      lost: load.accepted.length - seen.length,
      notAccepted: load.sent - load.accepted.length,
      statuses: load.statuses,
      achievedRate: load.achievedRate,
      lateP99: load.lateP99,
      e2e: { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), p999: quantile(latencies, 0.999) },
      request: load.request
    }
  } finally {
    await Promise.all([worker.stop(), serve.stop()])
  }
}

const redis = await startRedis()
const samples = []
try {
  for (let run = 0; run < runs; run++) {
    const sample = await oneRun(redis, run)
    samples.push(sample)
    console.error(`e2e: run ${run + 1}: ${Math.round(sample.achievedRate)}/s, arrival→handler p50 ${sample.e2e.p50.toFixed(2)} ms p99 ${sample.e2e.p99.toFixed(2)} ms, lost ${sample.lost}`)
  }
} finally {
  await redis.stop()
}

const of = (pick) => spread(samples.map(pick))
const result = {
  rate, duration, runs,
  achievedRate: of((s) => s.achievedRate),
  generatorLateP99: of((s) => s.lateP99),
  e2e: { p50: of((s) => s.e2e.p50), p99: of((s) => s.e2e.p99), p999: of((s) => s.e2e.p999) },
  request: { p50: of((s) => s.request.p50), p99: of((s) => s.request.p99), p999: of((s) => s.request.p999) },
  sent: samples.reduce((n, s) => n + s.sent, 0),
  accepted: samples.reduce((n, s) => n + s.accepted, 0),
  notAccepted: samples.reduce((n, s) => n + s.notAccepted, 0),
  lost: samples.reduce((n, s) => n + s.lost, 0),
  samples
}
const markdown = [
  `Offered ${rate} requests/s for ${duration} s, open loop (sent on schedule, not on answers), by a generator in its own process;`,
  '`anvil serve` (logging at `warn`) and `anvil worker` (default concurrency 10, handler `bench/e2e-handler.mjs`) on a private',
  '`redis-server`. End to end: from the send time in the body to the handler\'s start (`performance.timeOrigin + performance.now()`',
  `in both processes). ${runs} run(s), median [min–max]; a warm-up of ${100 * warmupSeconds} events before each run is not counted.`, '',
  '| measure | p50 ms | p99 ms | p99.9 ms |',
  '|---|---|---|---|',
  `| send → handler start | ${showSpread(result.e2e.p50, 2)} | ${showSpread(result.e2e.p99, 2)} | ${showSpread(result.e2e.p999, 2)} |`,
  `| request (send → 202) | ${showSpread(result.request.p50, 2)} | ${showSpread(result.request.p99, 2)} | ${showSpread(result.request.p999, 2)} |`, '',
  `Achieved rate: ${showSpread(result.achievedRate)} requests/s (generator late by ${showSpread(result.generatorLateP99, 1)} ms at p99).`,
  `Sent ${result.sent}, accepted ${result.accepted}, not accepted ${result.notAccepted}; **lost (accepted, never handled): ${result.lost}**.`
]
emitSection({ id: 'e2e', title: 'End to end', markdown, data: result }, values)
if (result.lost !== 0 || result.notAccepted !== 0) {
  console.error(`e2e: ${result.lost} accepted events were never handled; ${result.notAccepted} requests were not accepted`)
  process.exitCode = 1
}
