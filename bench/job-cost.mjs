// What one add costs Redis and Node, by what the job holds: the floor's job (`servers/floor.mjs`), Anvil's job
// (the fields and options `enqueue` in src/queue/webhook-queue.ts writes, built here field by field), Anvil's job with the default
// retention on it (as every job had it before the worker applied the default), and a what-if, not what Anvil stores:
// also without the content type and signature that the stored headers repeat.
// Every job goes through Anvil's corked add (src/queue/add-corked.ts) in batches of MAX_BATCH, so only the job differs.
// Redis CPU from INFO cpu; Node CPU of this process (building, serialising and sending the adds).
// Not in run.mjs. Usage: node bench/job-cost.mjs [--jobs 30000] [--runs 3] [--quick]
import { createHash, randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { addCorked } from '../dist/src/queue/add-corked.js'
import { MAX_BATCH, WebhookQueue } from '../dist/src/queue/webhook-queue.js'
import { resolveQueueSettings } from '../dist/src/inbound/ingress-options.js'
import { DEFAULT_KEEP_JOBS, jobOptions } from '../dist/src/queue/queue-settings.js'
import { benchArgs, emitSection, redisCpuSeconds, redisUsedMemory, showSpread, spread, startRedis } from './lib.mjs'

const values = benchArgs({
  jobs: { type: 'string', default: '30000' },
  runs: { type: 'string', default: '3' }
})
const jobs = values.quick ? 400 : Number(values.jobs)
const runs = values.quick ? 1 : Number(values.runs)

// The ingress bench's request (bench/load.mjs): a body of about 80 bytes, its signature, and the headers
// autocannon sends.
const payload = Buffer.from(JSON.stringify({ id: `evt_${Date.now()}_12345`, type: 'bench.event', data: { amount: 12345, currency: 'eur' } })).toString('base64')
const signature = 'sha256=' + 'a'.repeat(64)
const headers = { 'content-type': 'application/json', 'x-signature': signature, host: '127.0.0.1:3000' }
const settings = resolveQueueSettings({})
const { attempts, backoff } = jobOptions(settings)
const { removeOnComplete, removeOnFail } = DEFAULT_KEEP_JOBS
const dedupe = (key) => ({ id: key, ttl: settings.dedupeWindowMs })
const anvilData = (key) => ({
  v: 1, source: 'default', key, payload, contentType: headers['content-type'], signature, provider: 'anvil', headers,
  receivedAt: Date.now(), retry: settings.retrySchedule, requestId: randomUUID()
})

const variants = {
  floor: (key, jobId) => ({ data: { payload }, opts: { jobId, deduplication: dedupe(key), removeOnComplete: true } }),
  anvil: (key, jobId) => ({ data: anvilData(key), opts: { attempts, backoff, jobId, deduplication: dedupe(key) } }),
  'anvil, default retention on the job': (key, jobId) => ({ data: anvilData(key), opts: { attempts, backoff, removeOnComplete, removeOnFail, jobId, deduplication: dedupe(key) } }),
  'anvil, no repeated header values': (key, jobId) => {
    const { contentType, signature, ...data } = anvilData(key)
    return { data, opts: { attempts, backoff, jobId, deduplication: dedupe(key) } }
  }
}

const redis = await startRedis()
const connection = new Redis(redis.url, { maxRetriesPerRequest: null })
const queue = new WebhookQueue({ redis: connection, settings })
const samples = new Map(Object.keys(variants).map((name) => [name, []]))
try {
  // The variants alternate run by run, so a machine that drifts moves them alike.
  for (let run = 0; run < runs; run++) {
    for (const [name, make] of Object.entries(variants)) {
      await redis.client.flushall()
      const memoryBefore = await redisUsedMemory(redis.client)
      const redisBefore = await redisCpuSeconds(redis.client)
      const nodeBefore = process.cpuUsage()
      for (let i = 0; i < jobs; i += MAX_BATCH) {
        const batch = []
        for (let j = 0; j < MAX_BATCH; j++) batch.push(make(createHash('sha256').update(randomUUID()).digest('hex'), 'e_' + randomUUID()))
        await addCorked(queue.queue, connection, batch)
      }
      const node = process.cpuUsage(nodeBefore)
      const redisUs = 1e6 * (await redisCpuSeconds(redis.client) - redisBefore) / jobs
      samples.get(name).push({ redisUs, nodeUs: (node.user + node.system) / jobs, bytes: (await redisUsedMemory(redis.client) - memoryBefore) / jobs })
    }
  }
} finally {
  await queue.close()
  connection.disconnect()
  await redis.stop()
}

const rows = [...samples].map(([variant, s]) => ({
  variant,
  redisUs: spread(s.map((x) => Math.round(10 * x.redisUs) / 10)),
  nodeUs: spread(s.map((x) => Math.round(10 * x.nodeUs) / 10)),
  bytes: spread(s.map((x) => Math.round(x.bytes)))
}))
emitSection({
  id: 'job-cost',
  title: 'Cost of one add, by what the job holds',
  markdown: [
    `${jobs} adds per variant in batches of ${MAX_BATCH} through Anvil's corked add, ${runs} run(s), median [min–max]. Redis CPU from INFO cpu;`,
    'Node CPU of the adding process (build, serialise, send; also making each key and id, alike in every row); Redis memory per waiting job',
    '(job hash, dedupe key, its entries in the wait list and the event stream).',
    'The last row is a what-if, not what Anvil stores.', '',
    '| job | Redis CPU µs/add | Node CPU µs/add | Redis bytes/job |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.variant} | ${showSpread(r.redisUs, 1)} | ${showSpread(r.nodeUs, 1)} | ${showSpread(r.bytes)} |`)
  ],
  data: { jobs, runs, rows }
}, values)
