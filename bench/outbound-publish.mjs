// Outbound publish: messages/s through `publish` inside a transaction (BEGIN, publish, COMMIT: the check, the
// JSON round trip, the INSERT with its NOTIFY) against a floor, the bare INSERT of the same row in the same
// transaction, at the same concurrency. Then latency, publish to receiver, at a fixed rate: publish in a
// transaction → the dispatcher (LISTEN) → the delivery worker (PostgreSQL store, signature, POST) → a receiver
// in this process; p50 and p99 of commit → request arrival.
// Needs PostgreSQL on 127.0.0.1:5432 (trust, as postgres; or ANVIL_BENCH_PG_URL): it creates a database of its
// own and drops it. Usage: node bench/outbound-publish.mjs [--messages 5000] [--runs 3] [--concurrency 10]
//   [--rate 200] [--seconds 20] [--notify-interval 50] [--quick]
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { createDeliveryWorker, createOutbound, migrate } from '../dist/index.js'
import { outboundInternals } from '../dist/src/outbox/outbound.js'
import { benchArgs, benchDatabase, emitSection, postgresCpuSeconds, quantile, showSpread, spread, startRedis } from './lib.mjs'

const values = benchArgs({
  messages: { type: 'string', default: '5000' },
  runs: { type: 'string', default: '3' },
  concurrency: { type: 'string', default: '10' },
  rate: { type: 'string', default: '200' },
  seconds: { type: 'string', default: '20' },
  'notify-interval': { type: 'string', default: '50' }
})
const quick = values.quick
const messages = quick ? 50 : Number(values.messages)
const runs = quick ? 1 : Number(values.runs)
const concurrency = Number(values.concurrency)
const rate = quick ? 20 : Number(values.rate)
const seconds = quick ? 1 : Number(values.seconds)
const notifyIntervalMs = Number(values['notify-interval'])
const GIVE_UP_MS = 120_000

const database = await benchDatabase('publish')
const { name: dbName, url: dbUrl } = database
const redis = await startRedis()
await migrate(dbUrl)
const pool = new pg.Pool({ connectionString: dbUrl, max: concurrency })
// The database is dropped WITH (FORCE) at the end: a connection it ends is not an error of the bench.
pool.on('error', () => {})
const outbound = createOutbound({ database: pool, redis: redis.url, notifyIntervalMs })
const data = (i) => ({ invoice: `in_${i}`, amount: 1000 + i, currency: 'eur', lines: [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }] })

/** `count` transactions over `concurrency` clients: messages/s, and CPU µs per message of this process and PostgreSQL. */
async function throughput (side, count) {
  let next = 0
  const one = async (client, i) => {
    await client.query('BEGIN')
    if (side === 'anvil') await outbound.publish({ type: 'invoice.paid', data: data(i) }, { client })
    else {
      // Prepared too (a named statement), as publish's are: the ratio is Anvil's own cost.
      await client.query({
        name: 'bench_floor_insert',
        text: 'INSERT INTO anvil.outbox (id, type, public_type, data) VALUES ($1, $2, $2, $3)',
        values: [`floor_${Date.now().toString(16)}${randomBytes(8).toString('hex')}`, 'invoice.paid', JSON.stringify(data(i))]
      })
    }
    await client.query('COMMIT')
  }
  const cpuBefore = process.cpuUsage()
  const pgBefore = await postgresCpuSeconds(pool, dbName)
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    const client = await pool.connect()
    try {
      for (let i = next++; i < count; i = next++) await one(client, i)
    } finally {
      client.release()
    }
  }))
  const rateOf = count / ((performance.now() - started) / 1000)
  const node = process.cpuUsage(cpuBefore)
  const pgCpu = (await postgresCpuSeconds(pool, dbName)).pg - pgBefore.pg
  // Each round starts from an empty outbox, so the two sides see the same table.
  await pool.query('TRUNCATE anvil.outbox')
  return { rate: rateOf, cpu: (node.user + node.system) / count + pgCpu * 1e6 / count }
}

async function latency () {
  const arrived = new Map()
  const receiver = createServer((req, res) => {
    const at = performance.now()
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      arrived.set(JSON.parse(Buffer.concat(chunks).toString('utf8')).id, at)
      res.statusCode = 204
      res.end()
    })
  })
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  await outbound.endpoints.create({ url: `http://127.0.0.1:${receiver.address().port}/hooks` })
  const worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, allowNets: '127.0.0.0/8', concurrency })
  await worker.start()
  await outbound.dispatcher.start()
  const committed = new Map()
  const total = rate * seconds
  const started = performance.now()
  const inFlight = []
  for (let i = 0; i < total; i++) {
    // Open loop: each message goes at its time, whatever the pipeline does.
    const wait = started + (i * 1000) / rate - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    inFlight.push((async () => {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const { messageId } = await outbound.publish({ type: 'invoice.paid', data: data(i) }, { client })
        await client.query('COMMIT')
        committed.set(messageId, performance.now())
      } finally {
        client.release()
      }
    })())
  }
  await Promise.all(inFlight)
  const deadline = Date.now() + GIVE_UP_MS
  while (arrived.size < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  await worker.close()
  receiver.closeAllConnections()
  receiver.close()
  const sorted = [...committed].filter(([id]) => arrived.has(id)).map(([id, at]) => arrived.get(id) - at).sort((a, b) => a - b)
  return { total, delivered: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) }
}

let row
let late
try {
  // Warm-up (connections, plans); a quick run's figures mean nothing, so it has none.
  if (!quick) {
    await throughput('anvil', Math.min(200, messages))
    await throughput('floor', Math.min(200, messages))
  }
  const rates = { anvil: [], floor: [] }
  const cpu = { anvil: [], floor: [] }
  for (let run = 0; run < runs; run++) {
    for (const side of run % 2 === 0 ? ['anvil', 'floor'] : ['floor', 'anvil']) {
      const result = await throughput(side, messages)
      rates[side].push(result.rate)
      cpu[side].push(result.cpu)
    }
  }
  row = {
    anvil: spread(rates.anvil), floor: spread(rates.floor), ratio: spread(rates.anvil.map((a, i) => a / rates.floor[i])),
    anvilCpu: spread(cpu.anvil), floorCpu: spread(cpu.floor), cpuRatio: spread(cpu.anvil.map((a, i) => cpu.floor[i] / a))
  }
  console.error(`outbound publish: anvil ${Math.round(row.anvil.median)}/s, floor ${Math.round(row.floor.median)}/s, ratio ${row.ratio.median.toFixed(2)}; CPU µs/message anvil ${Math.round(row.anvilCpu.median)}, floor ${Math.round(row.floorCpu.median)}, floor / anvil ${row.cpuRatio.median.toFixed(2)}`)
  late = await latency()
  console.error(`outbound latency at ${rate}/s: p50 ${late.p50?.toFixed(1)} ms, p99 ${late.p99?.toFixed(1)} ms, ${late.delivered}/${late.total}`)
} finally {
  await outbound.close()
  await pool.end()
  await redis.stop()
  await database.drop()
}

const ms = (x) => x === undefined ? '–' : x.toFixed(1)
const markdown = [
  `${messages} transactions per round over ${concurrency} connections, each BEGIN, one message, COMMIT. **anvil**: \`publish\` with the`,
  `caller's client (TypeBox check, JSON round trip, a prepared INSERT … ON CONFLICT, a NOTIFY per ${notifyIntervalMs} ms at most). **floor**: the bare INSERT of the`,
  `same row (data serialized, prepared too) in the same transaction. ${runs} paired run(s), order alternated, median [min–max]; the ratio is per run (target ≥ 0.8).`,
  'CPU: µs per message of the bench process and the bench database\'s PostgreSQL backends, summed; its ratio is floor / anvil, per run.', '',
  '| anvil messages/s | floor messages/s | anvil / floor | anvil CPU µs | floor CPU µs | CPU floor / anvil |', '|---|---|---|---|---|---|',
  `| ${showSpread(row.anvil)} | ${showSpread(row.floor)} | ${showSpread(row.ratio, 2)} | ${showSpread(row.anvilCpu)} | ${showSpread(row.floorCpu)} | ${showSpread(row.cpuRatio, 2)} |`, '',
  `Latency: ${rate} messages/s for ${seconds} s, each published in its own transaction; commit → the receiver (in the bench process) has`,
  'the request, through the dispatcher (LISTEN), BullMQ and the delivery worker (PostgreSQL store, Standard Webhooks signature, POST).', '',
  '| delivered | p50 ms | p99 ms | max ms |', '|---|---|---|---|',
  `| ${late.delivered}/${late.total} | ${ms(late.p50)} | ${ms(late.p99)} | ${ms(late.max)} |`
]
emitSection({ id: 'outbound-publish', title: 'Outbound publish and latency', markdown, data: { messages, runs, concurrency, rate, seconds, notifyIntervalMs, row, latency: late } }, values)
