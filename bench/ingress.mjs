// Ingress through real Redis: Anvil against its floor and its ceiling, in one run, each mix, repeated.
// Then, separately labelled, the Anvil plugin route with an in-memory queue stub (no Redis), only to compare
// with Anvil 0.1's published 10.5k req/s.
// Usage: node bench/ingress.mjs [--duration 8] [--runs 5] [--warmup 2] [--connections 50,200] [--mixes unique,storm,bad]
//                               [--servers ceiling,floor,anvil,anvil-plugin,anvil-stub] [--quick]
import { benchArgs, emitSection, redisCpuSeconds, runLoad, showSpread, spread, startRedis, startServer } from './lib.mjs'

const values = benchArgs({
  // Five shorter runs rather than three long ones: run-to-run spread on a shared 2-core machine is far
  // larger than what a longer run removes.
  duration: { type: 'string', default: '8' },
  runs: { type: 'string', default: '5' },
  connections: { type: 'string', default: '50,200' },
  mixes: { type: 'string', default: 'unique,storm,bad' },
  servers: { type: 'string' },
  // Unmeasured load before each measured run, the same for every server: the figures are those of a warm
  // process (a gateway runs for days), not of V8 compiling its hot paths in the first seconds.
  warmup: { type: 'string', default: '2' }
})
const duration = values.quick ? 0.2 : Number(values.duration)
const runs = values.quick ? 1 : Number(values.runs)
const warmup = values.quick ? 0 : Number(values.warmup)
const connectionsList = (values.quick ? '10' : values.connections).split(',').map(Number)
const mixes = values.quick ? ['unique'] : values.mixes.split(',')
const secret = 'whsec_bench_0123456789'
/** Anvil 0.1's published figure, for the stub table only. */
const PUBLISHED = { rps: 10500, p50: 4, p99: 8 }

const servers = {
  ceiling: { module: new URL('./servers/ceiling.mjs', import.meta.url).pathname },
  floor: { module: new URL('./servers/floor.mjs', import.meta.url).pathname },
  anvil: { module: new URL('../dist/cli/anvil.js', import.meta.url).pathname, args: ['serve'] },
  'anvil-plugin': { module: new URL('./servers/anvil-plugin.mjs', import.meta.url).pathname },
  // Only the all-unique mix: it is there to compare with one published figure, not to be read across mixes.
  'anvil-stub': { module: new URL('./servers/anvil-stub.mjs', import.meta.url).pathname, mixes: ['unique'] }
}
const only = values.servers?.split(',')
for (const name of Object.keys(servers)) if (only !== undefined && !only.includes(name)) delete servers[name]

const redis = await startRedis()
const results = []
try {
  for (const connections of connectionsList) {
    for (const mix of mixes) {
      const entries = Object.entries(servers).filter(([, server]) => server.mixes === undefined || server.mixes.includes(mix))
      const samplesOf = new Map(entries.map(([name]) => [name, []]))
      // Runs interleave the servers (floor, anvil, floor, anvil, …): a machine that drifts during the
      // section then moves every server's figures alike, not only those of the servers measured last.
      for (let run = 0; run < runs; run++) {
        for (const [name, server] of entries) {
          await redis.client.flushall()
          const started = await startServer({ ...server, env: { REDIS_URL: redis.url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'warn', HOST: '127.0.0.1' } })
          try {
            // Bodies of its own (another seed): the measured run's are still all new to the server.
            if (warmup > 0) await runLoad({ url: started.url, secret, connections, duration: warmup, mix })
            const cpuBefore = started.cpuSeconds()
            const redisBefore = await redisCpuSeconds(redis.client)
            const load = await runLoad({ url: started.url, secret, connections, duration, mix })
            // CPU per request answered: where the time goes. Server, Redis and generator share the 2 cores.
            load.serverUs = 1e6 * (started.cpuSeconds() - cpuBefore) / Math.max(1, load.total)
            load.generatorUs = 1e6 * load.generatorCpu / Math.max(1, load.total)
            load.redisUs = 1e6 * (await redisCpuSeconds(redis.client) - redisBefore) / Math.max(1, load.total)
            // BullMQ writes the queue's meta key when it connects; anything more means jobs reached Redis.
            if (name === 'anvil-stub' && (await redis.client.keys('*')).some((key) => !key.endsWith(':meta'))) {
              throw new Error('ingress: the in-memory stub wrote jobs to Redis; its figure would not be a stub figure')
            }
            samplesOf.get(name).push(load)
          } finally {
            await started.stop()
          }
        }
      }
      // Each run's ratio to the floor's run of the same round (the rounds interleave the servers): on a machine
      // whose speed drifts, the spread of paired ratios says more than the ratio of two medians.
      const floorRuns = samplesOf.get('floor')
      for (const [name, samples] of samplesOf) {
        const row = {
          server: name, mix, connections,
          rps: spread(samples.map((s) => s.requests)),
          p50: spread(samples.map((s) => s.p50)),
          p99: spread(samples.map((s) => s.p99)),
          p999: spread(samples.map((s) => s.p999)),
          serverUs: spread(samples.map((s) => Math.round(s.serverUs))),
          redisUs: spread(samples.map((s) => Math.round(s.redisUs))),
          generatorUs: spread(samples.map((s) => Math.round(s.generatorUs))),
          // None when a floor run answered nothing: a ratio to 0 is no figure.
          xFloor: floorRuns === undefined || floorRuns.some((f) => !(f.requests > 0)) ? undefined : spread(samples.map((s, i) => Math.round(100 * s.requests / floorRuns[i].requests) / 100)),
          errors: samples.reduce((sum, s) => sum + s.errors + s.timeouts, 0),
          statusCodes: samples.map((s) => s.statusCodes),
          // A run that outran the generator's signed bodies sent some twice: for any server that dedupes (all but
          // the bare route), its "unique" counted duplicates. The row stays, marked, and the rest of the section too.
          repeated: name !== 'ceiling' && samples.some((s) => s.wrapped)
        }
        results.push(row)
        if (row.repeated) console.error(`ingress: ${name} ${mix} c=${connections} outran the generator's signed bodies; its row is marked`)
        console.error(`ingress: ${name} ${mix} c=${connections}: ${row.rps.median} req/s, p99 ${row.p99.median} ms, server ${row.serverUs.median} µs/req, redis ${row.redisUs.median} µs/req, generator ${row.generatorUs.median} µs/req`)
      }
    }
  }
} finally {
  await redis.stop()
}

/** What a row's server column adds when its runs repeated bodies. */
const repeatedMark = (r) => r.repeated ? ' (bodies repeated: not all-unique)' : ''
const find = (server, mix, c) => results.find((r) => r.server === server && r.mix === mix && r.connections === c)
const ratio = (r, other) => other === undefined ? '–' : (r.rps.median / other.rps.median).toFixed(2)
/** × floor: the median [min–max] of the runs' paired ratios. */
const xFloor = (r) => r.xFloor === undefined ? '–' : showSpread(r.xFloor, 2)
const markdown = [
  `Load generator (autocannon) in its own process; bodies signed before the clock; ${duration} s per run after ${warmup} s of unmeasured warm-up load, ${runs} run(s), median [min–max].`,
  'Each round runs every server once, one after the other; × floor is the median [min–max] of each round\'s ratio to the floor\'s run of that round.',
  'Each server in its own process against a private `redis-server`: **ceiling** a bare Fastify route answering 202; **floor** raw body,',
  'constant-time HMAC, sha256 key, one BullMQ `add` with a dedupe window (`bench/servers/floor.mjs`); **anvil** `anvil serve`',
  '(metrics, health routes, logging at `warn`); **anvil-plugin** the plugin in a host app with Fastify\'s logger off.', '',
  '| server | mix | conns | req/s | p50 ms | p99 ms | p99.9 ms | × floor | × ceiling | server CPU µs/req | Redis CPU µs/req | generator CPU µs/req | errors |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|'
]
for (const r of results.filter((r) => r.server !== 'anvil-stub')) {
  markdown.push(`| ${r.server}${repeatedMark(r)} | ${r.mix} | ${r.connections} | ${showSpread(r.rps)} | ${showSpread(r.p50)} | ${showSpread(r.p99)} | ${showSpread(r.p999)} | ${xFloor(r)} | ${ratio(r, find('ceiling', r.mix, r.connections))} | ${r.serverUs.median} | ${r.redisUs.median} | ${r.generatorUs.median} | ${r.errors} |`)
}
const stubRows = results.filter((r) => r.server === 'anvil-stub')
if (stubRows.length > 0) {
  markdown.push('', '### In-memory queue stub (NOT a real-Redis figure)', '',
    '`bench/servers/anvil-stub.mjs`: the Anvil plugin route with its queue replaced by an in-memory Map that dedupes by key;',
    'no Redis, no BullMQ. It exists only to compare with Anvil 0.1\'s published figure. That figure was measured with the',
    'load generator **inside the server\'s process**; here the generator runs in its own process, as for every other row.', '',
    '| server | mix | conns | req/s | p50 ms | p99 ms | p99.9 ms | × ceiling | errors |',
    '|---|---|---|---|---|---|---|---|---|')
  for (const r of stubRows) {
    markdown.push(`| anvil-stub (in-memory queue)${repeatedMark(r)} | ${r.mix} | ${r.connections} | ${showSpread(r.rps)} | ${showSpread(r.p50)} | ${showSpread(r.p99)} | ${showSpread(r.p999)} | ${ratio(r, find('ceiling', r.mix, r.connections))} | ${r.errors} |`)
  }
  markdown.push(`| Anvil 0.1 published (stub, generator in-process) | unique | not stated | ${PUBLISHED.rps} | ${PUBLISHED.p50} | ${PUBLISHED.p99} | – | – | – |`)
}
emitSection({ id: 'ingress', title: 'Ingress', markdown, data: { duration, runs, published: PUBLISHED, results } }, values)
