// Hostile receivers: the latency of a healthy tenant's deliveries beside another tenant whose endpoints hang (never
// answer) or trickle (answer 200, then a byte a second), against the same healthy tenant alone. One delivery worker
// (`createDeliveryWorker`, its defaults: per-endpoint cap, circuit breaker, 10 s timeout) at a fixed offered rate,
// open loop; enqueue → completed of the healthy endpoint's deliveries, p50/p99. Rounds are paired (alone, then
// hostile, the order alternated) and the ratio hostile p99 / alone p99 is per round (target ≤ 2). The receiver
// runs in its own process; the delivery log is a no-op store. Usage: node bench/outbound-hostile.mjs [--rounds 3]
//   [--seconds 20] [--rate 50] [--hostile-rate 5] [--hanging 2] [--trickling 2] [--concurrency 10] [--warmup 3] [--quick]
import { loadavg } from 'node:os'
import { Queue } from 'bullmq'
import { createDeliveryWorker } from '../dist/index.js'
import { benchArgs, emitSection, memoryDeliveryStore, showSpread, spread, startRedis, startServer, settleLatencies } from './lib.mjs'

const values = benchArgs({
  rounds: { type: 'string', default: '3' },
  seconds: { type: 'string', default: '20' },
  /** Jobs/s offered to the healthy endpoint. */
  rate: { type: 'string', default: '50' },
  /** Jobs/s offered to each hostile endpoint. */
  'hostile-rate': { type: 'string', default: '5' },
  hanging: { type: 'string', default: '2' },
  trickling: { type: 'string', default: '2' },
  concurrency: { type: 'string', default: '10' },
  /** Seconds of an unmeasured round of each side first, so the JIT's warm-up and the first connections fall on no measured round. */
  warmup: { type: 'string', default: '3' }
})
const quick = values.quick
const rounds = quick ? 1 : Number(values.rounds)
const seconds = quick ? 1 : Number(values.seconds)
const rate = quick ? 10 : Number(values.rate)
const hostileRate = quick ? 2 : Number(values['hostile-rate'])
const concurrency = Number(values.concurrency)
// The worker's default timeout; a quick run keeps it short so that closing does not wait for it.
const timeoutMs = quick ? 1000 : 10_000
const PREFIX = '{anvil}'
const SECRET = 'whsec_' + Buffer.alloc(32, 9).toString('base64')
const GIVE_UP_MS = 120_000
const hostile = [
  ...Array.from({ length: Number(values.hanging) }, (_, i) => ({ endpointId: `ep_a_hang_${i}`, path: `/hang/${i}` })),
  ...Array.from({ length: Number(values.trickling) }, (_, i) => ({ endpointId: `ep_a_trickle_${i}`, path: `/trickle/${i}` }))
]

const redis = await startRedis()
const receiver = await startServer({ module: new URL('./servers/outbound-receiver.mjs', import.meta.url).pathname })

const store = memoryDeliveryStore(SECRET)
const job = (i, endpointId, path) => ({
  messageId: `msg_${i}`, endpointId, eventType: 'invoice.paid', url: receiver.url + path, scheme: 'standard-webhooks',
  body: JSON.stringify({ id: `msg_${i}`, type: 'invoice.paid', data: { invoice: `in_${i}`, amount: 1000 + i } })
})

/** One round: the healthy endpoint at `rate`/s, with the hostile endpoints at `hostileRate`/s each or not; its latencies. */
async function round (withHostile, roundSeconds = seconds) {
  await redis.client.flushall()
  const queueName = 'hostile'
  const queue = new Queue(queueName, { connection: { url: redis.url }, prefix: PREFIX })
  const latencies = []
  const worker = createDeliveryWorker({ redis: redis.url, store, queueName, prefix: PREFIX, concurrency, allowNets: '127.0.0.1/32', timeoutMs, shutdownTimeoutMs: 1000 })
  worker.worker.on('completed', (done) => {
    if (done.data.endpointId === 'ep_b') latencies.push(done.finishedOn - done.timestamp)
  })
  await worker.start()
  // One schedule of every job of the round, in time order: open loop, each job goes at its time whatever the worker does.
  const plan = []
  for (let i = 0; i < rate * roundSeconds; i++) plan.push({ at: (i * 1000) / rate, endpointId: 'ep_b', path: '/ep_b' })
  if (withHostile) {
    for (const [k, { endpointId, path }] of hostile.entries()) {
      // Offset per endpoint, so the hostile jobs do not all land at the same instant.
      for (let i = 0; i < hostileRate * roundSeconds; i++) plan.push({ at: (i * 1000) / hostileRate + (k * 1000) / (hostileRate * hostile.length), endpointId, path })
    }
  }
  plan.sort((a, b) => a.at - b.at)
  const started = performance.now()
  const options = { attempts: 3, backoff: { type: 'anvil-outbound' }, removeOnComplete: true, removeOnFail: true }
  for (const [i, { at, endpointId, path }] of plan.entries()) {
    const wait = started + at - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    await queue.add('deliver', job(i, endpointId, path), options)
  }
  const healthy = rate * roundSeconds
  return await settleLatencies({ latencies, healthy, worker, queue, giveUpMs: GIVE_UP_MS })
}

const results = { alone: [], hostile: [] }
const load = { start: loadavg(), end: undefined }
try {
  if (!quick) for (const withHostile of [false, true]) await round(withHostile, Number(values.warmup))
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 === 0 ? ['alone', 'hostile'] : ['hostile', 'alone']) {
      const result = await round(side === 'hostile')
      results[side].push(result)
      console.error(`outbound hostile: round ${r + 1} ${side}: healthy p50 ${result.p50} ms, p99 ${result.p99} ms, max ${result.max} ms, ${result.delivered}/${result.healthy}`)
    }
  }
  load.end = loadavg()
} finally {
  await receiver.stop()
  await redis.stop()
}

const row = (side) => ({
  delivered: results[side].reduce((sum, r) => sum + r.delivered, 0),
  offered: results[side].reduce((sum, r) => sum + r.healthy, 0),
  p50: spread(results[side].map((r) => r.p50)),
  p99: spread(results[side].map((r) => r.p99)),
  max: spread(results[side].map((r) => r.max))
})
const rows = { alone: row('alone'), hostile: row('hostile') }
const ratio = spread(results.hostile.map((r, i) => r.p99 / results.alone[i].p99))
const describe = `${Number(values.hanging)} hanging and ${Number(values.trickling)} trickling endpoints of another tenant, ${hostileRate} jobs/s each`
const markdown = [
  `One healthy endpoint offered ${rate} jobs/s for ${seconds} s, open loop, to \`createDeliveryWorker\` at concurrency ${concurrency} with its`,
  `defaults (timeout ${timeoutMs} ms, circuit breaker, per-endpoint cap); enqueue → completed of its deliveries, alone and beside`,
  `${describe} (hang: never answers; trickle: 200, then a byte a second). ${rounds} paired round(s), order alternated,`,
  'median [min–max]; the ratio is per round (target ≤ 2).', '',
  '| healthy tenant | delivered | p50 ms | p99 ms | max ms |', '|---|---|---|---|---|',
  `| alone | ${rows.alone.delivered}/${rows.alone.offered} | ${showSpread(rows.alone.p50)} | ${showSpread(rows.alone.p99)} | ${showSpread(rows.alone.max)} |`,
  `| beside ${describe} | ${rows.hostile.delivered}/${rows.hostile.offered} | ${showSpread(rows.hostile.p50)} | ${showSpread(rows.hostile.p99)} | ${showSpread(rows.hostile.max)} |`,
  '', `p99 beside / p99 alone: ${showSpread(ratio, 2)}. Load average (1, 5, 15 min) at the start ${load.start.map((x) => x.toFixed(2)).join(', ')}, at the end ${(load.end ?? loadavg()).map((x) => x.toFixed(2)).join(', ')}.`
]
emitSection({ id: 'outbound-hostile', title: 'Outbound hostile receivers', markdown, data: { rounds, seconds, rate, hostileRate, concurrency, rows, ratio, results, load } }, values)
