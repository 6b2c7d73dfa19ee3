// A CPU profile of `anvil serve` (or, with --server, of the plugin alone or the floor server) under load
// (node --cpu-prof), summed by self time: per area (HTTP and Fastify, BullMQ and msgpack, ioredis, crypto,
// JSON, logging, metrics, GC, …) and the top functions. Proportions, not absolute figures: a short run on a
// busy machine still says where the time goes.
// A native function counts for the nearest caller with a script; native socket writes are split by the caller
// outside Node's own modules that wrote (Fastify answering, ioredis sending commands).
// Usage: node bench/profile.mjs [--duration 10] [--connections 50] [--top 25] [--server anvil|anvil-plugin|floor] [--keep] [--quick]
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, emitSection, forkTracked, freePort, runLoad, startRedis, tempDir } from './lib.mjs'
import { setTimeout as sleep } from 'node:timers/promises'

const values = benchArgs({
  duration: { type: 'string', default: '10' },
  connections: { type: 'string', default: '50' },
  top: { type: 'string', default: '25' },
  // Another server profiled the same way (SERVERS below): the plugin without the CLI, or the floor, what a
  // correct ingress costs at the least, to compare function by function.
  server: { type: 'string', default: 'anvil' },
  // Keep the .cpuprofile (for Chrome DevTools or speedscope); by default it goes with the temporary directory.
  keep: { type: 'boolean', default: false }
})
const duration = values.quick ? 0.2 : Number(values.duration)
const connections = values.quick ? 10 : Number(values.connections)
const secret = 'whsec_bench_0123456789'

/** Areas by where the function lives (its script URL), first match wins; `(garbage collector)` etc. by name. */
const AREAS = [
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['idle', (f) => f.functionName === '(idle)'],
  ['(program): native, not attributed', (f) => f.functionName === '(program)'],
  ['logging (pino)', (f) => /node_modules\/(pino|@pinojs\/[^/]+|pino-std-serializers|sonic-boom|thread-stream|fast-redact|on-exit-leak-free|atomic-sleep|safe-stable-stringify|quick-format-unescaped)\//.test(f.url) || /\/dist\/cli\/logging\.js/.test(f.url)],
  ['metrics and diagnostics (prom-client, hooks)', (f) => /node_modules\/(prom-client|tdigest|bintrees)\//.test(f.url) || /\/dist\/(plugins\/(metrics|route-diagnostics)|src\/diagnostics)\.js/.test(f.url) || /diagnostics_channel/.test(f.url)],
  ['BullMQ add, msgpack', (f) => /node_modules\/(bullmq|msgpackr|cron-parser|semver|tslib|uuid)\//.test(f.url)],
  ['ioredis and the Redis protocol', (f) => /node_modules\/(ioredis|redis-parser|redis-errors|cluster-key-slot|denque|standard-as-callback|lodash\.)/.test(f.url)],
  ['JSON (parse, stringify, schemas)', (f) => /node_modules\/(fast-json-stringify|secure-json-parse|json-schema-ref-resolver|ajv|fast-uri|@fastify\/fast-json-stringify-compiler|@fastify\/ajv-compiler)/.test(f.url) || /^(parse|stringify)$/.test(f.functionName) && f.url === ''],
  ['crypto (HMAC, hashes, UUIDs)', (f) => /node:internal\/crypto|^node:crypto/.test(f.url)],
  ['HTTP: Fastify', (f) => /node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify\/|fastify-plugin|abstract-logging|toad-cache|process-warning|rfdc|proxy-addr|forwarded|ipaddr\.js)/.test(f.url)],
  ['Node: http, net, streams (JS side)', (f) => /node:(internal\/)?(_http|http|net|stream|streams|internal\/streams|internal\/http|internal\/stream_base|tls|dns|internal\/net)/.test(f.url) || /^node:internal\/(streams|http|net|stream_base_commons|js_stream_socket)/.test(f.url)],
  ['Anvil (dist/)', (f) => /\/dist\//.test(f.url)],
  ['Node: timers, promises, async hooks, buffers', (f) => /^node:/.test(f.url)],
  ['other', () => true]
]

const redis = await startRedis()
const dir = values.keep ? mkdtempSync(join(tmpdir(), 'anvil-prof-')) : tempDir('anvil-prof-')
const port = await freePort()
const SERVERS = {
  anvil: { label: '`anvil serve` (logging at `warn`)', module: new URL('../dist/cli/anvil.js', import.meta.url).pathname, args: ['serve'] },
  'anvil-plugin': { label: 'The Anvil plugin in a host app, logger off (`servers/anvil-plugin.mjs`)', module: new URL('./servers/anvil-plugin.mjs', import.meta.url).pathname, args: [] },
  floor: { label: 'The floor server (`servers/floor.mjs`)', module: new URL('./servers/floor.mjs', import.meta.url).pathname, args: [] }
}
if (SERVERS[values.server] === undefined) throw new Error(`profile: --server is one of ${Object.keys(SERVERS).join(', ')}`)
const profiled = SERVERS[values.server]
const server = forkTracked(profiled.module, profiled.args,
  { PORT: String(port), HOST: '127.0.0.1', REDIS_URL: redis.url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'warn' },
  { execArgv: ['--cpu-prof', '--cpu-prof-dir', dir] })
const url = `http://127.0.0.1:${port}`
let load
const window = { from: 0, to: 0 }
try {
  for (let i = 0; i < 200; i++) { try { await fetch(url + '/webhooks', { method: 'POST' }); break } catch { await sleep(50) } }
  // A warm-up first (module loading, JIT), left out of the profile's window: only the measured load counts. A quick
  // run's figures mean nothing, so it has none.
  if (!values.quick) await runLoad({ url, secret, connections, duration: 2, mix: 'unique' })
  // The profile's timestamps are µs on the system's monotonic clock, which process.hrtime also reads.
  window.from = Number(process.hrtime.bigint() / 1000n)
  load = await runLoad({ url, secret, connections, duration, mix: 'unique' })
  window.to = Number(process.hrtime.bigint() / 1000n)
} finally {
  // SIGTERM: the server closes gracefully and Node writes the profile on the way out.
  await server.stop()
  await redis.stop()
}

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
if (file === undefined) throw new Error('profile: the server wrote no .cpuprofile')
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parentOf = new Map()
for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n)
/** The nearest caller (this frame included) that `stop` accepts, or the outermost one. */
function callerWhere (node, stop) {
  let frame = node
  while (!stop(frame.callFrame) && parentOf.has(frame.id)) frame = parentOf.get(frame.id)
  return frame.callFrame
}
const area = (callFrame) => AREAS.find(([, test]) => test(callFrame))[0]
/**
 * A native function (no script URL) counts for the nearest caller that has one; the native socket writes
 * (the syscalls) are split by who wrote: the nearest caller outside Node's own modules (Fastify's reply, ioredis).
 */
function areaOf (node) {
  const { functionName, url } = node.callFrame
  if (url === '' && /^write(v|Buffer|Utf8String|Latin1String|AsciiString|Ucs2String)$/.test(functionName)) {
    return `socket writes (native), for ${area(callerWhere(node, (f) => f.url !== '' && !f.url.startsWith('node:')))}`
  }
  return area(callerWhere(node, (f) => f.url !== '' || /^\(.*\)$/.test(f.functionName)))
}
const counts = new Map()
let at = profile.startTime
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i]
  if (at >= window.from && at <= window.to) counts.set(id, (counts.get(id) ?? 0) + 1)
})
if (counts.size === 0) throw new Error('profile: no sample fell within the load (the profile\'s clock is not process.hrtime\'s)')
const byFunction = new Map()
const byArea = new Map()
let total = 0
let idle = 0
for (const [id, count] of counts) {
  const { callFrame } = byId.get(id)
  const area = areaOf(byId.get(id))
  if (area === 'idle') { idle += count; continue }
  const where = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${callFrame.lineNumber + 1}`
  // By function and area: the native socket writes are one function whose samples split by who wrote.
  const entry = `${where}\0${area}`
  byFunction.set(entry, { where, area, count: (byFunction.get(entry)?.count ?? 0) + count })
  byArea.set(area, (byArea.get(area) ?? 0) + count)
  total += count
}
const pct = (count) => (100 * count / total).toFixed(1)
const areas = [...byArea].sort((a, b) => b[1] - a[1])
const top = [...byFunction].sort((a, b) => b[1].count - a[1].count).slice(0, Number(values.top))
const markdown = [
  `${profiled.label} under ${connections} connections of all-unique signed requests for ${duration} s: ${Math.round(load.requests)} req/s, p99 ${load.p99} ms`,
  `(throughput is lowered by the profiler; read the proportions). ${total} busy samples; ${idle} idle samples left out. Self time, so a`,
  'library\'s share is the time spent in its own functions, not in what it calls.', '',
  '| area | self time % |',
  '|---|---|',
  ...areas.map(([area, count]) => `| ${area} | ${pct(count)} |`), '',
  `Top ${top.length} functions:`, '',
  '| self % | function | area |',
  '|---|---|---|',
  ...top.map(([, { where, area, count }]) => `| ${pct(count)} | \`${where}\` | ${area} |`)
]
if (values.keep) markdown.push('', `Profile kept: ${join(dir, file)}`)
emitSection({ id: 'profile', title: 'CPU profile of the ingress', markdown, data: { load, total, idle, areas: Object.fromEntries(areas.map(([a, c]) => [a, +pct(c)])), top: top.map(([, { where, area, count }]) => ({ where, area, pct: +pct(count) })) } }, values)
