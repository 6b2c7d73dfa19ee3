// Worker drain: jobs/s completed by Anvil's `createWorker` (no-op handler) against a raw BullMQ `Worker` (no-op
// processor) on the same queue contents, at several concurrencies, in one run on a private redis-server.
// Each side gets the queue filled afresh with the same N events, accepted by Anvil's own `Ingress` (so the
// job data is what the ingress makes); the order of the two sides alternates between repeats.
// The rate is taken from the first completion to the last, so connecting and start-up are not in it.
// Usage: node bench/drain.mjs [--jobs 10000] [--runs 3] [--concurrency 1,10,50] [--quick]
import { createHmac } from 'node:crypto'
import { Worker } from 'bullmq'
import { Redis } from 'ioredis'
import { createWorker } from '../dist/index.js'
import { Ingress } from '../dist/src/inbound/ingress.js'
import { resolveIngressOptions } from '../dist/src/inbound/ingress-options.js'
import { DEFAULT_KEEP_JOBS } from '../dist/src/queue/queue-settings.js'
import { benchArgs, emitSection, showSpread, spread, startRedis } from './lib.mjs'

const values = benchArgs({
  jobs: { type: 'string', default: '10000' },
  runs: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '1,10,50' }
})
const jobs = values.quick ? 100 : Number(values.jobs)
const runs = values.quick ? 1 : Number(values.runs)
const concurrencies = values.concurrency.split(',').map(Number)
const secret = 'whsec_bench_0123456789'
/** Anvil's defaults, which both sides use. */
const QUEUE = 'webhooks'
const PREFIX = '{anvil}'
const GIVE_UP_MS = 120_000

const redis = await startRedis()
const ingress = new Ingress(resolveIngressOptions({ redis: redis.url, secret }))

/** The same N signed requests every time; a flush before each fill clears their dedupe keys. */
const requests = Array.from({ length: jobs }, (_, i) => {
  const body = Buffer.from(JSON.stringify({ id: `evt_${i}`, type: 'bench.event', data: { amount: i, currency: 'eur' } }))
  const headers = { 'content-type': 'application/json', 'x-signature': 'sha256=' + createHmac('sha256', secret).update(body).digest('hex'), 'user-agent': 'bench' }
  return { body, headers }
})

async function fill () {
  await redis.client.flushall()
  for (let i = 0; i < jobs; i += 500) {
    const results = await Promise.all(requests.slice(i, i + 500).map(({ body, headers }) => ingress.accept(body, headers)))
    if (results.some((r) => r.replayed !== false)) throw new Error('drain: a fill made a duplicate; the queue was not empty')
  }
}

/** Starts a side's worker, waits for all N completions, closes it; returns jobs/s between first and last completion. */
async function drain (side, concurrency) {
  let first = 0
  let last = 0
  let completed = 0
  let failed = 0
  let done
  const finished = new Promise((resolve) => { done = resolve })
  const onCompleted = () => {
    const now = performance.now()
    if (completed === 0) first = now
    completed++
    if (completed === jobs) { last = now; done() }
  }
  let close
  if (side === 'anvil') {
    const worker = createWorker(async () => {}, { redis: redis.url, concurrency })
    worker.worker.on('completed', onCompleted)
    worker.worker.on('failed', () => { failed++ })
    await worker.start()
    close = () => worker.close()
  } else {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null })
    // The retention `createWorker` applies to jobs without their own (the ingress's defaults), so both sides remove alike.
    const worker = new Worker(QUEUE, async () => {}, { connection, prefix: PREFIX, concurrency, ...DEFAULT_KEEP_JOBS })
    worker.on('completed', onCompleted)
    worker.on('failed', () => { failed++ })
    close = async () => { await worker.close(); connection.disconnect() }
  }
  let timer
  try {
    const expired = new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`drain: ${side} completed ${completed} of ${jobs} within ${GIVE_UP_MS} ms`)), GIVE_UP_MS) })
    await Promise.race([finished, expired])
  } finally {
    clearTimeout(timer)
    await close()
  }
  if (failed > 0) throw new Error(`drain: ${failed} jobs failed on ${side}`)
  return (jobs - 1) / ((last - first) / 1000)
}

const rows = []
try {
  for (const concurrency of concurrencies) {
    const rates = { anvil: [], raw: [] }
    for (let run = 0; run < runs; run++) {
      // Alternated, so neither side always drains first (a warmer Redis, a quieter machine).
      for (const side of run % 2 === 0 ? ['anvil', 'raw'] : ['raw', 'anvil']) {
        await fill()
        rates[side].push(await drain(side, concurrency))
      }
    }
    const row = {
      concurrency,
      anvil: spread(rates.anvil),
      raw: spread(rates.raw),
      ratio: spread(rates.anvil.map((a, i) => a / rates.raw[i]))
    }
    rows.push(row)
    console.error(`drain: concurrency ${concurrency}: anvil ${Math.round(row.anvil.median)} jobs/s, raw ${Math.round(row.raw.median)} jobs/s, ratio ${row.ratio.median.toFixed(2)}`)
  }
} finally {
  await ingress.close()
  await redis.stop()
}

const markdown = [
  `${jobs} jobs per drain, made by Anvil's \`Ingress\` from signed requests (real job data); the queue is flushed and refilled with`,
  'the same events before each side. **anvil**: `createWorker` with a no-op handler; **raw**: `new Worker(queue, async () => {},',
  `{ concurrency, connection, prefix, removeOnComplete, removeOnFail })\` on the same queue name and prefix, with the default retention`,
  `that \`createWorker\` applies. Jobs/s from the first completion to the last; ${runs} run(s),`,
  'order alternated, median [min–max]. The ratio is per run (anvil / raw of the same run); target ≥ 0.9.', '',
  '| concurrency | anvil jobs/s | raw BullMQ jobs/s | anvil / raw |',
  '|---|---|---|---|'
]
for (const r of rows) markdown.push(`| ${r.concurrency} | ${showSpread(r.anvil)} | ${showSpread(r.raw)} | ${showSpread(r.ratio, 2)} |`)
emitSection({ id: 'drain', title: 'Worker drain', markdown, data: { jobs, runs, rows } }, values)
