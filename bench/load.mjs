// The load generator, in its own process. Every body is signed before the clock starts.
// Input (argv[2], JSON): { url, secret, connections, duration, mix: 'unique' | 'storm' | 'bad' }
// Output (stdout, JSON): autocannon's summary figures, and how many requests went out against how many
// distinct bodies there were.
import { createHmac } from 'node:crypto'
import autocannon from 'autocannon'

/**
 * Bodies signed per second of load: above any server's rate here (the bare-route ceiling peaks near
 * 56k/s), so an all-unique run never sends a body twice. A run that does anyway says so (`wrapped`).
 */
const BODIES_PER_SECOND = 60000

const { url, secret, connections, duration, mix, seed = Date.now() } = JSON.parse(process.argv[2])
const count = Math.ceil(duration * BODIES_PER_SECOND)

function sign (body) {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex')
}

// A redelivery storm repeats a small set of events; a bad-signature mix forges 10 % of them.
// Two flat arrays, not an object per request: less for the generator's GC to walk while it measures.
const bodies = new Array(count)
const signatures = new Array(count)
for (let i = 0; i < count; i++) {
  const n = mix === 'storm' && i % 10 !== 0 ? i % 100 : i
  const body = JSON.stringify({ id: `evt_${seed}_${n}`, type: 'bench.event', data: { amount: n, currency: 'eur' } })
  const forged = mix === 'bad' && i % 10 === 0
  bodies[i] = body
  signatures[i] = forged ? sign(body + 'x') : sign(body)
}

let next = 0
// The generator's own CPU (ingress.mjs reports it per request): it shares the machine with the server and Redis.
const cpuStart = process.cpuUsage()
// autocannon samples every second and stops at a sample: a run shorter than that (`--quick`) takes one sample at
// its end, or it would last the full second. req/s is the samples' average scaled to a second.
const sampleInt = Math.min(1000, duration * 1000)
const result = await autocannon({
  url,
  connections,
  duration,
  sampleInt,
  requests: [{
    method: 'POST',
    path: '/webhooks',
    setupRequest: (request) => {
      const i = next++ % count
      return { ...request, body: bodies[i], headers: { 'content-type': 'application/json', 'x-signature': signatures[i] } }
    }
  }]
})
const cpu = process.cpuUsage(cpuStart)
process.stdout.write(JSON.stringify({
  requests: result.requests.average * 1000 / sampleInt,
  total: result.requests.total,
  p50: result.latency.p50,
  p99: result.latency.p99,
  p999: result.latency.p99_9,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  statusCodes: result.statusCodeStats,
  // True when the run outran its signed bodies and sent some twice: its "unique" was not all-unique.
  wrapped: next > count,
  generatorCpu: (cpu.user + cpu.system) / 1e6
}) + '\n')
