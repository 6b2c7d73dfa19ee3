// A bounded soak: `anvil serve` and `anvil worker` processes on a private Redis, a steady rate of unique,
// duplicate and always-failing events, a handler that fails 5 % of attempts. Stops by itself; loopback only.
// Usage: node bench/soak.mjs [--minutes 10 | --seconds N] [--rate 200] [--retention-seconds 60] [--sample S]
// --retention-seconds N keeps completed and failed jobs N s, dead letters and dedupe keys 2N s, so Redis
// reaches its steady state within the run; 0 keeps Anvil's defaults (days), under which Redis grows all run.
import { fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { createHmac } from 'node:crypto'
import { Agent, request } from 'node:http'
import { redisUsedMemory, startRedis, startServer } from './lib.mjs'

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    seconds: { type: 'string' },
    rate: { type: 'string', default: '200' },
    'retention-seconds': { type: 'string', default: '60' },
    sample: { type: 'string' }
  }
})
const durationMs = 1000 * (values.seconds !== undefined ? Number(values.seconds) : 60 * Number(values.minutes))
const rate = Number(values.rate)
const retentionSeconds = Number(values['retention-seconds'])
if (!Number.isInteger(retentionSeconds) || retentionSeconds < 0) throw new Error('--retention-seconds must be a whole number, 0 for the defaults')
const sampleEveryMs = values.sample !== undefined ? 1000 * Number(values.sample) : Math.max(1000, durationMs / 40)
/** Memory is judged flat when it moved less than this over the last half of the run. */
const FLAT_WITHIN = 0.1
const secret = 'whsec_soak_0123456789'
const cli = new URL('../dist/cli/anvil.js', import.meta.url).pathname

// Dead letters must outlive failed jobs (the CLI refuses otherwise); dedupe keys live as long.
const retentionEnv = retentionSeconds === 0
  ? { ANVIL_DEDUPE_WINDOW_MS: '120000' }
  : {
      ANVIL_RETENTION_COMPLETED_AGE_SECONDS: String(retentionSeconds),
      ANVIL_RETENTION_FAILED_AGE_SECONDS: String(retentionSeconds),
      ANVIL_RETENTION_DEAD_AGE_SECONDS: String(2 * retentionSeconds),
      ANVIL_DEDUPE_WINDOW_MS: String(2000 * retentionSeconds)
    }
const redis = await startRedis(['--maxmemory-policy', 'noeviction'])
const env = { REDIS_URL: redis.url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'error', HOST: '127.0.0.1', ANVIL_RETRY_SCHEDULE: '100,200', ...retentionEnv }
const serve = await startServer({ module: cli, args: ['serve'], env })
// The handler reports each completion over IPC, so the soak's own bookkeeping takes no Redis memory.
const worker = fork(cli, ['worker', '--handler', new URL('./soak-handler.mjs', import.meta.url).pathname], { env: { ...process.env, ...env, PORT: '0' }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
const completed = new Set()
worker.on('message', (message) => { if (typeof message?.completed === 'string') completed.add(message.completed) })
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

const deadKey = '{anvil}:webhooks.dead:wait'
// Dead letters are pruned after 2N s: the soak notes every one it sees long before that.
const deadLettered = new Set()
async function collectDeadLetters () {
  for (const id of await redis.client.lrange(deadKey, 0, -1)) deadLettered.add(id.replace(/^d_/, ''))
}

const rssMb = (pid) => +(Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024).toFixed(1)
const redisMb = async () => +(await redisUsedMemory(redis.client) / 1048576).toFixed(2)
/** What holds Redis memory: the queues' job sets, the event streams, and the key count. */
async function redisBreakdown () {
  const q = (name, state) => `{anvil}:${name}:${state}`
  const [keys, completedJobs, failedJobs, deadLetters, events, deadEvents] = await Promise.all([
    redis.client.dbsize(), redis.client.zcard(q('webhooks', 'completed')), redis.client.zcard(q('webhooks', 'failed')),
    redis.client.llen(deadKey), redis.client.xlen(q('webhooks', 'events')), redis.client.xlen(q('webhooks.dead', 'events'))
  ])
  return { keys, completedJobs, failedJobs, deadLetters, events, deadEvents }
}

const counts = { sent: 0, accepted: 0, duplicates: 0, rejected: 0, unavailable: 0, errors: 0 }
const uniqueAccepted = new Set()
const failingAccepted = new Set()
const samples = []
const started = Date.now()
let nextSample = started
let nextDeadScan = started
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
        const { replayed, jobId } = JSON.parse(answer)
        if (replayed) counts.duplicates++
        else { counts.accepted++; (fail ? failingAccepted : uniqueAccepted).add(jobId) }
      } else if (status === 503) counts.unavailable++
      else if (status === 0) counts.errors++
      else counts.rejected++
    })
    inFlight.add(sending)
    sending.finally(() => inFlight.delete(sending))
  }
  if (Date.now() >= nextDeadScan) {
    await collectDeadLetters()
    nextDeadScan += 2000
  }
  if (Date.now() >= nextSample) {
    samples.push({ t: Math.round((Date.now() - started) / 1000), ingressRssMb: rssMb(serve.pid), workerRssMb: rssMb(worker.pid), redisMb: await redisMb(), ...await redisBreakdown() })
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
await collectDeadLetters()
const end = { t: Math.round((Date.now() - started) / 1000), ingressRssMb: rssMb(serve.pid), workerRssMb: rssMb(worker.pid), redisMb: await redisMb(), ...await redisBreakdown() }
const workerExited = new Promise((resolve) => worker.once('exit', resolve))
worker.kill('SIGTERM')
await Promise.all([serve.stop(), workerExited])
await redis.stop()

const accepted = [...uniqueAccepted, ...failingAccepted]
const lostIds = accepted.filter((id) => !completed.has(id) && !deadLettered.has(id))
const accounting = {
  ...counts,
  completed: accepted.filter((id) => completed.has(id)).length,
  deadLettered: accepted.filter((id) => deadLettered.has(id)).length,
  alwaysFailing: failingAccepted.size,
  alwaysFailingDeadLettered: [...failingAccepted].filter((id) => deadLettered.has(id)).length,
  lost: lostIds.length
}

/** Least-squares slope (per minute) and the change from the first to the last sample of `points`. */
function trend (points, field) {
  const xs = points.map((p) => p.t / 60)
  const ys = points.map((p) => p[field])
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length
  const my = ys.reduce((a, b) => a + b, 0) / ys.length
  const slope = xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0)
  const first = ys[0]
  const last = ys[ys.length - 1]
  return { first, last, slopePerMinute: +slope.toFixed(3), change: +((last - first) / first).toFixed(3) }
}

const retention = retentionSeconds === 0
  ? 'Anvil defaults (completed 1 h / 1000, failed 7 d / 10000, dead letters 14 d), dedupe window 120 s'
  : `completed and failed jobs ${retentionSeconds} s, dead letters and dedupe keys ${2 * retentionSeconds} s`
console.log(`soak: ${Math.round(durationMs / 1000)} s at ${rate}/s; retention: ${retention}`)
console.log('| t (s) | ingress RSS MB | worker RSS MB | Redis used MB | keys | completed jobs | failed jobs | dead letters | events stream |')
console.log('|---|---|---|---|---|---|---|---|---|')
for (const s of [...samples, { ...end, t: `${end.t} (drained)` }]) {
  console.log(`| ${s.t} | ${s.ingressRssMb} | ${s.workerRssMb} | ${s.redisMb} | ${s.keys} | ${s.completedJobs} | ${s.failedJobs} | ${s.deadLetters} | ${s.events} |`)
}
console.log(JSON.stringify(accounting))

// Judged over the last half of the run, once retention (2N s at most) has had time to apply.
const lastHalf = samples.filter((s) => s.t >= durationMs / 2000)
if (lastHalf.length >= 3) {
  console.log(`memory over the last half (t >= ${Math.round(durationMs / 2000)} s, ${lastHalf.length} samples; flat = moved less than ${FLAT_WITHIN * 100} %):`)
  for (const [field, name] of [['ingressRssMb', 'ingress RSS'], ['workerRssMb', 'worker RSS'], ['redisMb', 'Redis used_memory']]) {
    const { first, last, slopePerMinute, change } = trend(lastHalf, field)
    const verdict = Math.abs(change) < FLAT_WITHIN ? 'flat' : change > 0 ? 'GROWING' : 'falling'
    console.log(`  ${name}: ${first} -> ${last} MB (${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)} %), slope ${slopePerMinute} MB/min: ${verdict}`)
  }
} else {
  console.log('memory: too few samples in the last half to judge (run longer or pass --sample)')
}
if (lostIds.length !== 0 || counts.errors !== 0) {
  console.error(`soak: ${lostIds.length} accepted events neither completed nor dead-lettered (${lostIds.slice(0, 5).join(', ')}); ${counts.errors} requests unanswered`)
  process.exitCode = 1
}
