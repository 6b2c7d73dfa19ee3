// The load generator, in its own process. Every body is signed before the clock starts.
// Input (argv[2], JSON): { url, secret, connections, duration, mix: 'unique' | 'storm' | 'bad', requests }
// Output (stdout, JSON): autocannon's summary figures.
import { createHmac } from 'node:crypto'
import autocannon from 'autocannon'

const { url, secret, connections, duration, mix, requests: count = 200000, seed = Date.now() } = JSON.parse(process.argv[2])

function sign (body) {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex')
}

// A redelivery storm repeats a small set of events; a bad-signature mix forges 10 % of them.
const bodies = []
for (let i = 0; i < count; i++) {
  const n = mix === 'storm' && i % 10 !== 0 ? i % 100 : i
  const body = JSON.stringify({ id: `evt_${seed}_${n}`, type: 'bench.event', data: { amount: n, currency: 'eur' } })
  const forged = mix === 'bad' && i % 10 === 0
  bodies.push({ body, headers: { 'content-type': 'application/json', 'x-signature': forged ? sign(body + 'x') : sign(body) } })
}

let next = 0
const result = await autocannon({
  url,
  connections,
  duration,
  requests: [{
    method: 'POST',
    path: '/webhooks',
    setupRequest: (request) => {
      const item = bodies[next++ % bodies.length]
      return { ...request, body: item.body, headers: item.headers }
    }
  }]
})
process.stdout.write(JSON.stringify({
  requests: result.requests.average,
  total: result.requests.total,
  p50: result.latency.p50,
  p99: result.latency.p99,
  p999: result.latency.p99_9,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  statusCodes: result.statusCodeStats
}) + '\n')
