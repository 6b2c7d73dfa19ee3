// Redis memory of outgoing deliveries: bytes per completed delivery job as the dispatcher writes it (the
// envelope in the job data, the default retention, deliveryJobOptions) and drained by a Worker, for bodies of
// 1, 16 and 256 KiB; with the body kept, and with the body stripped when the job completes (what the delivery
// worker does). Also the cost of the strip: Redis CPU and drain time per job, with and without it.
// `used_memory` before and after, over N jobs, and MEMORY USAGE of one completed job's hash.
//
//   node bench/outbound-memory.mjs [--jobs 2000] [--runs 3] [--quick]
import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import { deliveryJobOptions, resolveSchedule } from '../dist/src/delivery/delivery-schedule.js'
import { DEFAULT_DELIVERY_RETENTION } from '../dist/src/outbox/outbound-options.js'
import { stripBody } from '../dist/src/delivery/delivery-worker.js'
import { benchArgs, emitSection, redisCpuSeconds, redisUsedMemory, showSpread, spread, startRedis } from './lib.mjs'

const values = benchArgs({ jobs: { type: 'string', default: '2000' }, runs: { type: 'string', default: '3' } })
const JOBS = values.quick ? 50 : Number(values.jobs)
const RUNS = values.quick ? 1 : Number(values.runs)
const SIZES = [1024, 16 * 1024, 256 * 1024]
const PREFIX = '{anvil}'
const options = { ...deliveryJobOptions(resolveSchedule()), ...DEFAULT_DELIVERY_RETENTION }

const redis = await startRedis()
const data = (i, size) => {
  const head = `{"id":"msg_${i}","type":"invoice.paid","timestamp":"${new Date().toISOString()}","data":{"pad":"`
  return {
    messageId: `msg_${i}`, endpointId: 'ep_0123456789abcdef', eventType: 'invoice.paid', url: 'https://receiver.example/hooks/anvil',
    body: head + 'x'.repeat(Math.max(0, size - head.length - 3)) + '"}}', scheme: 'standard-webhooks'
  }
}

/** One drain of `jobs` jobs of `size` bytes; bytes per job after completion, and the drain's Redis CPU and time. */
async function drain (size, jobs, strip) {
  await redis.client.flushall()
  const queueConnection = redis.client.duplicate()
  const workerConnection = new Redis(redis.url, { maxRetriesPerRequest: null })
  const queue = new Queue('outbound', { connection: queueConnection, prefix: PREFIX })
  const before = await redisUsedMemory(redis.client)
  for (let i = 0; i < jobs; i += 100) {
    await queue.addBulk(Array.from({ length: Math.min(100, jobs - i) }, (_, k) =>
      ({ name: 'deliver', data: data(i + k, size), opts: { ...options, jobId: `msg_${i + k}.ep_0123456789abcdef` } })))
  }
  const cpu = await redisCpuSeconds(redis.client)
  const started = performance.now()
  let done = 0
  let stripped = 0
  const finished = new Promise((resolve) => {
    const worker = new Worker('outbound', async () => {}, { connection: workerConnection, prefix: PREFIX, concurrency: 10 })
    worker.on('completed', (job) => {
      if (strip) {
        void stripBody(job).then(() => { if (++stripped === jobs) resolve(worker) })
      } else if (++done === jobs) resolve(worker)
    })
  })
  const worker = await finished
  const ms = performance.now() - started
  const cpuMs = (await redisCpuSeconds(redis.client) - cpu) * 1000
  await worker.close()
  await queue.close()
  queueConnection.disconnect()
  workerConnection.disconnect()
  const after = await redisUsedMemory(redis.client)
  const one = await redis.client.memory('USAGE', `${PREFIX}:outbound:msg_0.ep_0123456789abcdef`, 'SAMPLES', '0')
  return { perJob: (after - before) / jobs, hash: one, cpuUs: cpuMs * 1000 / jobs, drainUs: ms * 1000 / jobs }
}

const rows = []
try {
  for (const size of SIZES) {
    const jobs = Math.max(20, Math.floor(JOBS * 1024 / Math.max(1024, size / 16)))
    const kept = []
    const stripped = []
    for (let run = 0; run < RUNS; run++) {
      // Alternated, so a drift of the machine moves both alike.
      const pair = run % 2 === 0 ? [false, true] : [true, false]
      for (const strip of pair) (strip ? stripped : kept).push(await drain(size, jobs, strip))
    }
    const of = (runs, key) => spread(runs.map((r) => r[key]))
    rows.push({ size, jobs, kept: Object.fromEntries(['perJob', 'hash', 'cpuUs', 'drainUs'].map((k) => [k, of(kept, k)])), stripped: Object.fromEntries(['perJob', 'hash', 'cpuUs', 'drainUs'].map((k) => [k, of(stripped, k)])) })
  }
} finally {
  await redis.stop()
}

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`
const markdown = [
  `Redis bytes per completed delivery job (used_memory over N jobs, and MEMORY USAGE of one job's hash), and per job Redis CPU and drain time of a no-op Worker at concurrency 10; median [min–max] of ${RUNS} runs, order alternated.`, '',
  '| body | jobs | kept: bytes/job | kept: job hash | stripped: bytes/job | stripped: job hash | Redis CPU µs/job kept → stripped | drain µs/job kept → stripped |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${kib(r.size)} | ${r.jobs} | ${showSpread(r.kept.perJob)} | ${r.kept.hash.median} | ${showSpread(r.stripped.perJob)} | ${r.stripped.hash.median} | ` +
    `${showSpread(r.kept.cpuUs)} → ${showSpread(r.stripped.cpuUs)} | ${showSpread(r.kept.drainUs)} → ${showSpread(r.stripped.drainUs)} |`)
]
emitSection({ id: 'outbound-memory', title: 'Redis memory of outgoing deliveries', markdown, data: rows }, values)
