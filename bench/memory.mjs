// Redis memory per accepted event at the default retention: INFO memory before and after N events
// (accepted by `anvil serve`, completed by `anvil worker`), divided by N. Job, dedupe key and retention together.
// Usage: node bench/memory.mjs [--events 5000] [--fill 1200] [--runs 3] [--quick]
import { createHmac } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { benchArgs, emitSection, forkTracked, redisUsedMemory, showSpread, spread, startRedis, startServer } from './lib.mjs'

const values = benchArgs({
  events: { type: 'string', default: '5000' },
  // More than the completed-job retention (1000 by default), so phase 2 starts at the steady state.
  fill: { type: 'string', default: '1200' },
  runs: { type: 'string', default: '3' }
})
const events = values.quick ? 100 : Number(values.events)
const fill = values.quick ? 50 : Number(values.fill)
const runs = values.quick ? 1 : Number(values.runs)
const secret = 'whsec_memory_0123456789'
const cli = new URL('../dist/cli/anvil.js', import.meta.url).pathname
/** Lets BullMQ's trimming and the worker's last acknowledgements settle before INFO memory is read. */
const SETTLE_MS = values.quick ? 100 : 500

// Phase 1 fills the completed-job retention (1000 by default); phase 2 is the steady state, where each new
// event adds its dedupe key (held 72 h) and pushes one old completed job out.
async function oneRun (redis) {
  await redis.client.flushall()
  const env = { REDIS_URL: redis.url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'error', HOST: '127.0.0.1' }
  const serve = await startServer({ module: cli, args: ['serve'], env })
  const worker = forkTracked(cli, ['worker', '--handler', new URL('../examples/handler.js', import.meta.url).pathname], { ...env, PORT: '0' })
  const used = async () => await redisUsedMemory(redis.client)
  async function send (from, count) {
    for (let i = from; i < from + count; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, from + count - i) }, async (_, j) => {
        const body = JSON.stringify({ id: `evt_${i + j}`, type: 'memory.event', data: { amount: i + j, currency: 'eur', customer: 'cus_0123456789' } })
        const res = await fetch(serve.url + '/webhooks', { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': 'sha256=' + createHmac('sha256', secret).update(body).digest('hex') }, body })
        if (res.status !== 202) throw new Error(`memory: answer ${res.status}`)
      }))
    }
  }
  async function drained () {
    for (let i = 0; i < 600; i++) {
      if (await redis.client.llen('{anvil}:webhooks:wait') + await redis.client.llen('{anvil}:webhooks:active') === 0) return
      await sleep(100)
    }
    throw new Error('memory: the worker did not drain the queue within 60 s')
  }
  try {
    const empty = await used()
    await send(0, fill)
    await drained()
    await sleep(SETTLE_MS)
    const before = await used()
    await send(fill, events)
    await drained()
    await sleep(SETTLE_MS)
    const after = await used()
    return {
      fillingBytes: (before - empty) / fill,
      steadyBytes: (after - before) / events,
      completedKept: await redis.client.zcard('{anvil}:webhooks:completed'),
      dedupeKeys: (await redis.client.keys('{anvil}:webhooks:de:*')).length
    }
  } finally {
    await Promise.all([worker.stop(), serve.stop()])
  }
}

const redis = await startRedis()
const samples = []
try {
  for (let run = 0; run < runs; run++) samples.push(await oneRun(redis))
} finally {
  await redis.stop()
}
const result = {
  events, fill, runs,
  fillingBytes: spread(samples.map((s) => s.fillingBytes)),
  steadyBytes: spread(samples.map((s) => s.steadyBytes)),
  completedKept: samples.at(-1).completedKept,
  dedupeKeys: samples.at(-1).dedupeKeys
}
const markdown = [
  `Redis \`used_memory\` before and after, per event accepted by \`anvil serve\` and completed by \`anvil worker\`; ${runs} run(s), median [min–max].`, '',
  '| phase | bytes per event |',
  '|---|---|',
  `| filling the retention (first ${fill} events: job kept + dedupe key) | ${showSpread(result.fillingBytes)} |`,
  `| steady state (${events} more events) | ${showSpread(result.steadyBytes)} |`, '',
  `At the end: ${result.completedKept} completed jobs kept (default retention), ${result.dedupeKeys} dedupe keys held (72 h window).`
]
emitSection({ id: 'memory', title: 'Redis memory per event', markdown, data: result }, values)
