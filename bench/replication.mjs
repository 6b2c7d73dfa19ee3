// What the opt-in `replication` option (WAIT after each batch of adds) costs: the same ingress on a primary
// with one replica, without and with `replication: { replicas: 1, timeoutMs: 200 }`, in one run.
// Usage: node bench/replication.mjs [--duration 8] [--runs 3] [--connections 50]
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { machine, runLoad, spread, startRedis, startServer } from './lib.mjs'

const { values } = parseArgs({ options: { duration: { type: 'string', default: '8' }, runs: { type: 'string', default: '3' }, connections: { type: 'string', default: '50' } } })
const secret = 'whsec_bench_0123456789'
const primary = await startRedis()
const port = Number(new URL(primary.url).port)
const replica = await startRedis(['--replicaof', '127.0.0.1', String(port)])
for (let i = 0; i < 200 && !(await replica.client.info('replication')).includes('master_link_status:up'); i++) await sleep(50)

const rows = []
try {
  for (const [label, wait] of [['no WAIT', 0], ['WAIT 1 200', 1]]) {
    const samples = []
    for (let run = 0; run < Number(values.runs); run++) {
      await primary.client.flushall()
      const server = await startServer({
        module: new URL('./servers/anvil-plugin.mjs', import.meta.url).pathname,
        env: { REDIS_URL: primary.url, WEBHOOK_SECRET: secret, ANVIL_BENCH_WAIT_REPLICAS: String(wait) }
      })
      try {
        samples.push(await runLoad({ url: server.url, secret, connections: Number(values.connections), duration: Number(values.duration), mix: 'unique' }))
      } finally {
        await server.stop()
      }
    }
    rows.push({ label, rps: spread(samples.map((s) => s.requests)), p50: spread(samples.map((s) => s.p50)), p99: spread(samples.map((s) => s.p99)), non2xx: samples.reduce((n, s) => n + s.non2xx, 0) })
  }
} finally {
  await replica.stop()
  await primary.stop()
}
const env = machine()
console.log(`Commit ${env.commit}, ${env.cpu}, ${env.cores} cores, Node ${env.node}, Redis ${env.redis}; primary + 1 replica on the same machine; ${values.connections} connections, ${values.duration} s × ${values.runs} runs, median [min–max].`)
console.log('| ingress | req/s | p50 ms | p99 ms | non-2xx |')
console.log('|---|---|---|---|---|')
for (const r of rows) console.log(`| ${r.label} | ${Math.round(r.rps.median)} [${Math.round(r.rps.min)}–${Math.round(r.rps.max)}] | ${r.p50.median} | ${r.p99.median} | ${r.non2xx} |`)
