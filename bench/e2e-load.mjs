// The end-to-end bench's generator, in its own process: signed requests at a fixed rate, open loop (each is
// sent when its time comes, whether or not earlier ones were answered), each with its send time in the body.
// Input (argv[2], JSON): { url, secret, rate, duration, prefix }
// Output (stdout, JSON): accepted event ids, statuses, the requests' own latency, the achieved rate, how late
// the generator sent (if it fell behind, the rate was not offered).
import { createHmac } from 'node:crypto'
import { Agent, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { quantile } from './lib.mjs'

const { url, secret, rate, duration, prefix } = JSON.parse(process.argv[2])
const now = () => performance.timeOrigin + performance.now()
const agent = new Agent({ keepAlive: true, maxSockets: 256 })
const total = Math.round(rate * duration)
const accepted = []
const statuses = {}
const latencies = []
const lateness = []
let errors = 0

function send (n) {
  const sentAt = now()
  const body = JSON.stringify({ id: `${prefix}${n}`, sentAt, type: 'bench.e2e', data: { amount: n, currency: 'eur' } })
  const signature = 'sha256=' + createHmac('sha256', secret).update(body).digest('hex')
  return new Promise((resolve) => {
    const req = request(url + '/webhooks', { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-signature': signature } }, (res) => {
      res.resume()
      res.on('end', () => {
        latencies.push(now() - sentAt)
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
        if (res.statusCode === 202) accepted.push(`${prefix}${n}`)
        resolve()
      })
    })
    req.on('error', () => { errors++; resolve() })
    req.end(body)
  })
}

const pending = []
const start = now()
let n = 0
while (n < total) {
  const due = Math.min(total, Math.floor((now() - start) * rate / 1000) + 1)
  while (n < due) {
    lateness.push(now() - (start + n * 1000 / rate))
    pending.push(send(n++))
  }
  await sleep(1)
}
const lastSent = now()
await Promise.all(pending)
agent.destroy()

const q = (xs, p) => quantile([...xs].sort((a, b) => a - b), p)
process.stdout.write(JSON.stringify({
  sent: total,
  accepted,
  statuses,
  errors,
  achievedRate: total > 1 ? (total - 1) / ((lastSent - start) / 1000) : total,
  request: { p50: q(latencies, 0.5), p99: q(latencies, 0.99), p999: q(latencies, 0.999) },
  lateP99: q(lateness, 0.99)
}) + '\n')
