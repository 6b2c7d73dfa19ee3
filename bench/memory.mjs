// Redis memory per accepted event at the default retention: INFO memory before and after N events
// (accepted by `anvil serve`, completed by `anvil worker`), divided by N. Job, dedupe key and retention together.
// Usage: node bench/memory.mjs [--events 5000]
import { fork } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { machine, startRedis, startServer } from './lib.mjs'

const { values } = parseArgs({ options: { events: { type: 'string', default: '5000' } } })
const events = Number(values.events)
const secret = 'whsec_memory'
const cli = new URL('../dist/cli/anvil.js', import.meta.url).pathname
const redis = await startRedis()
const env = { REDIS_URL: redis.url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'error', HOST: '127.0.0.1' }
const serve = await startServer({ module: cli, args: ['serve'], env })
const worker = fork(cli, ['worker', '--handler', new URL('../examples/handler.js', import.meta.url).pathname], { env: { ...process.env, ...env, PORT: '0' }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
const used = async () => Number((await redis.client.info('memory')).match(/used_memory:(\d+)/)?.[1])

// Phase 1 fills the completed-job retention (1000 by default); phase 2 is the steady state, where each new
// event adds its dedupe key (held 72 h) and pushes one old completed job out.
async function send (from, count) {
  for (let i = from; i < from + count; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, from + count - i) }, (_, j) => {
      const body = JSON.stringify({ id: `evt_${i + j}`, type: 'memory.event', data: { amount: i + j, currency: 'eur', customer: 'cus_0123456789' } })
      return fetch(serve.url + '/webhooks', { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': 'sha256=' + createHmac('sha256', secret).update(body).digest('hex') }, body })
    }))
  }
}
async function drained () {
  for (let i = 0; i < 600; i++) {
    if (await redis.client.llen('{anvil}:webhooks:wait') + await redis.client.llen('{anvil}:webhooks:active') === 0) return
    await sleep(100)
  }
}
const empty = await used()
const fill = 1200
await send(0, fill)
await drained()
await sleep(500)
const before = await used()
await send(fill, events)
await drained()
await sleep(500)
const after = await used()
const completedKept = await redis.client.zcard('{anvil}:webhooks:completed')
const dedupeKeys = (await redis.client.keys('{anvil}:webhooks:de:*')).length
const worker_ = new Promise((resolve) => worker.once('exit', resolve))
worker.kill('SIGTERM')
await Promise.all([serve.stop(), worker_])
await redis.stop()
const env_ = machine()
console.log(`Filling retention: ${Math.round((before - empty) / fill)} bytes per event over the first ${fill} events (job kept + dedupe key).`)
console.log(`Steady state: ${Math.round((after - before) / events)} bytes per accepted event over ${events} more (default retention: ${completedKept} completed jobs kept, ${dedupeKeys} dedupe keys held for 72 h).`)
console.log(`Commit ${env_.commit}; ${env_.cpu}, Node ${env_.node}, Redis ${env_.redis}.`)
