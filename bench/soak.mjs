// A bounded soak: `anvil serve` and `anvil worker` processes on a private Redis, a steady rate of unique,
// duplicate and always-failing events, a handler that fails 5 % of attempts. Stops by itself; loopback only.
// Usage: node bench/soak.mjs [--minutes 10 | --seconds N] [--rate 200]
import { fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { createHmac } from 'node:crypto'
import { Agent, request } from 'node:http'
import { startRedis, startServer } from './lib.mjs'

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, seconds: { type: 'string' }, rate: { type: 'string', default: '200' }, sample: { type: 'string' } } })
const durationMs = 1000 * (values.seconds !== undefined ? Number(values.seconds) : 60 * Number(values.minutes))
const rate = Number(values.rate)
const sampleEveryMs = values.sample !== undefined ? 1000 * Number(values.sample) : Math.max(1000, durationMs / 20)
const secret = 'whsec_soak'
const cli = new URL('../dist/cli/anvil.js', import.meta.url).pathname

const redis = await startRedis(['--maxmemory-policy', 'noeviction'])
// A dedupe window of 2 minutes (instead of 72 h) lets Redis memory reach its steady state within the soak.
const env = { REDIS_URL: redis.url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'error', HOST: '127.0.0.1', ANVIL_RETRY_SCHEDULE: '100,200', ANVIL_DEDUPE_WINDOW_MS: '120000' }
const serve = await startServer({ module: cli, args: ['serve'], env })
const worker = fork(cli, ['worker', '--handler', new URL('./soak-handler.mjs', import.meta.url).pathname], { env: { ...process.env, ...env, PORT: '0' }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
const { url } = serve

const agent = new Agent({ keepAlive: true, maxSockets: 32 })
function post (body) {
  const signature = 'sha256=' + createHmac('sha256', secret).update(body).digest('hex')
  return new Promise((resolve) => {
    const req = request(url + '/webhooks', { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-signature': signature } }, (res) => {
      let text = ''
      res.on('data', (c) => { text += c })
      res.on('end', () => resolve({ status: res.statusCode, body: text }))
    })
    req.on('error', () => resolve({ status: 0, body: '' }))
    req.end(body)
  })
}

const rssKb = (pid) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0)
const redisMemory = async () => Number((await redis.client.info('memory')).match(/used_memory:(\d+)/)?.[1] ?? 0)
const counts = { sent: 0, accepted: 0, duplicates: 0, rejected: 0, unavailable: 0, errors: 0, failing: 0 }
const uniqueAccepted = new Set()
const failingAccepted = new Set()
const samples = []
const started = Date.now()
let nextSample = started
let n = 0
const inFlight = new Set()

while (Date.now() - started < durationMs) {
  const due = Math.floor((Date.now() - started) * rate / 1000)
  while (n < due) {
    // 80 % new events, 15 % redeliveries of a recent one, 5 % events whose handler always fails.
    const roll = n % 20
    const id = roll < 3 && n > 100 ? `evt_${n - 1 - (n * 7919) % 100}` : `evt_${n}`
    const fail = roll === 19
    const body = JSON.stringify({ id, fail, type: 'soak.event' })
    n++
    counts.sent++
    const sending = post(body).then(({ status, body: answer }) => {
      if (status === 202) {
        const { replayed } = JSON.parse(answer)
        if (replayed) counts.duplicates++
        else { counts.accepted++; (fail ? failingAccepted : uniqueAccepted).add(JSON.parse(answer).jobId) }
      } else if (status === 503) counts.unavailable++
      else if (status === 0) counts.errors++
      else counts.rejected++
    })
    inFlight.add(sending)
    sending.finally(() => inFlight.delete(sending))
  }
  if (Date.now() >= nextSample) {
    samples.push({ t: Math.round((Date.now() - started) / 1000), ingressRssMb: +(rssKb(serve.pid) / 1024).toFixed(1), workerRssMb: +(rssKb(worker.pid) / 1024).toFixed(1), redisMb: +((await redisMemory()) / 1048576).toFixed(2) })
    nextSample += sampleEveryMs
  }
  await sleep(5)
}
await Promise.all(inFlight)

// Drain: wait until nothing is waiting, active or delayed (retries take at most 300 ms here).
const queueKey = (state) => `{anvil}:webhooks:${state}`
for (let i = 0; i < 600; i++) {
  const [wait, active, delayed] = await Promise.all([redis.client.llen(queueKey('wait')), redis.client.llen(queueKey('active')), redis.client.zcard(queueKey('delayed'))])
  if (wait + active + delayed === 0) break
  await sleep(100)
}
await sleep(500)
const completed = await redis.client.scard('soak:completed')
const deadLettered = await redis.client.llen('{anvil}:webhooks.dead:wait')
const lost = counts.accepted - completed - deadLettered
const workerExited = new Promise((resolve) => worker.once('exit', resolve))
worker.kill('SIGTERM')
await Promise.all([serve.stop(), workerExited])
await redis.stop()

console.log(`soak: ${Math.round(durationMs / 1000)} s at ${rate}/s`)
console.log('| t (s) | ingress RSS MB | worker RSS MB | Redis used MB |')
console.log('|---|---|---|---|')
for (const s of samples) console.log(`| ${s.t} | ${s.ingressRssMb} | ${s.workerRssMb} | ${s.redisMb} |`)
const accounting = { ...counts, completed, deadLettered, alwaysFailing: failingAccepted.size, lost }
console.log(JSON.stringify(accounting))
if (lost !== 0 || counts.errors !== 0) {
  console.error(`soak: ${lost} accepted events neither completed nor dead-lettered; ${counts.errors} requests unanswered`)
  process.exitCode = 1
}
