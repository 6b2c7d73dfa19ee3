// Ingress through real Redis: Anvil against its floor and its ceiling, in one run, each mix, repeated.
// Usage: node bench/ingress.mjs [--duration 10] [--runs 3] [--connections 50,200] [--quick]
// Writes bench/report-latest.md and bench/report-latest.json.
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { machine, redisCpuSeconds, runLoad, spread, startRedis, startServer } from './lib.mjs'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50,200' },
    mixes: { type: 'string', default: 'unique,storm,bad' },
    quick: { type: 'boolean', default: false },
    servers: { type: 'string' },
    out: { type: 'string', default: new URL('./report-latest', import.meta.url).pathname }
  }
})
const duration = values.quick ? 1 : Number(values.duration)
const runs = values.quick ? 1 : Number(values.runs)
const connectionsList = (values.quick ? '10' : values.connections).split(',').map(Number)
const mixes = values.quick ? ['unique'] : values.mixes.split(',')
const secret = 'whsec_bench'

const servers = {
  ceiling: { module: new URL('./servers/ceiling.mjs', import.meta.url).pathname },
  floor: { module: new URL('./servers/floor.mjs', import.meta.url).pathname },
  anvil: { module: new URL('../dist/cli/anvil.js', import.meta.url).pathname, args: ['serve'] },
  'anvil-plugin': { module: new URL('./servers/anvil-plugin.mjs', import.meta.url).pathname }
}
const only = values.servers?.split(',')
for (const name of Object.keys(servers)) if (only !== undefined && !only.includes(name)) delete servers[name]

const redis = await startRedis()
const results = []
try {
  for (const connections of connectionsList) {
    for (const mix of mixes) {
      for (const [name, server] of Object.entries(servers)) {
        const samples = []
        for (let run = 0; run < runs; run++) {
          await redis.client.flushall()
          const started = await startServer({ ...server, env: { REDIS_URL: redis.url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'warn', HOST: '127.0.0.1' } })
          try {
            const cpuBefore = started.cpuSeconds()
            const redisBefore = await redisCpuSeconds(redis.client)
            const load = await runLoad({ url: started.url, secret, connections, duration, mix, requests: 50000 })
            // CPU per request answered: where the time goes, server or Redis.
            load.serverUs = 1e6 * (started.cpuSeconds() - cpuBefore) / Math.max(1, load.total)
            load.redisUs = 1e6 * (await redisCpuSeconds(redis.client) - redisBefore) / Math.max(1, load.total)
            samples.push(load)
          } finally {
            await started.stop()
          }
        }
        const row = {
          server: name, mix, connections,
          rps: spread(samples.map((s) => s.requests)),
          p50: spread(samples.map((s) => s.p50)),
          p99: spread(samples.map((s) => s.p99)),
          p999: spread(samples.map((s) => s.p999)),
          serverUs: spread(samples.map((s) => Math.round(s.serverUs))),
          redisUs: spread(samples.map((s) => Math.round(s.redisUs))),
          errors: samples.reduce((sum, s) => sum + s.errors + s.timeouts, 0),
          statusCodes: samples.map((s) => s.statusCodes)
        }
        results.push(row)
        console.error(`${name} ${mix} c=${connections}: ${row.rps.median} req/s, p99 ${row.p99.median} ms, server ${row.serverUs.median} µs/req, redis ${row.redisUs.median} µs/req`)
      }
    }
  }
} finally {
  await redis.stop()
}

const env = machine()
const find = (server, mix, c) => results.find((r) => r.server === server && r.mix === mix && r.connections === c)
const lines = [
  '# Ingress benchmark', '',
  `Commit ${env.commit}, ${env.date}. ${env.cpu}, ${env.cores} cores, Node ${env.node}, Redis ${env.redis}.`,
  `Load generator (autocannon) in its own process; bodies signed before the clock; ${duration} s per run, ${runs} run(s), median [min–max].`, '',
  '| server | mix | conns | req/s | p50 ms | p99 ms | p99.9 ms | × floor | × ceiling | server CPU µs/req | Redis CPU µs/req |',
  '|---|---|---|---|---|---|---|---|---|---|---|'
]
for (const r of results) {
  const floor = find('floor', r.mix, r.connections)
  const ceiling = find('ceiling', r.mix, r.connections)
  const ratio = (other) => other === undefined ? '–' : (r.rps.median / other.rps.median).toFixed(2)
  lines.push(`| ${r.server} | ${r.mix} | ${r.connections} | ${Math.round(r.rps.median)} [${Math.round(r.rps.min)}–${Math.round(r.rps.max)}] | ${r.p50.median} | ${r.p99.median} | ${r.p999.median} | ${ratio(floor)} | ${ratio(ceiling)} | ${r.serverUs.median} | ${r.redisUs.median} |`)
}
writeFileSync(values.out + '.md', lines.join('\n') + '\n')
writeFileSync(values.out + '.json', JSON.stringify({ machine: env, duration, runs, results }, null, 2) + '\n')
console.log(lines.join('\n'))
