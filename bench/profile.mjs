// A CPU profile of `anvil serve` under load: node --cpu-prof, then the top functions by self time.
// Usage: node bench/profile.mjs [--duration 10] [--connections 50]
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fork } from 'node:child_process'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort, runLoad, startRedis } from './lib.mjs'

const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' }, top: { type: 'string', default: '30' } } })
const redis = await startRedis()
const dir = mkdtempSync(join(tmpdir(), 'anvil-prof-'))
const port = await freePort()
const secret = 'whsec_bench'
const server = fork(new URL('../dist/cli/anvil.js', import.meta.url).pathname, ['serve'], {
  execArgv: ['--cpu-prof', '--cpu-prof-dir', dir],
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', REDIS_URL: redis.url, WEBHOOK_SECRET: secret, LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit', 'ipc']
})
const url = `http://127.0.0.1:${port}`
for (let i = 0; i < 200; i++) { try { await fetch(url + '/webhooks', { method: 'POST' }); break } catch { await sleep(50) } }
const load = await runLoad({ url, secret, connections: Number(values.connections), duration: Number(values.duration), mix: 'unique', requests: 50000 })
server.kill('SIGINT')
await new Promise((resolve) => server.once('exit', resolve))
await redis.stop()

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))
const self = new Map()
const dt = profile.timeDeltas
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const counts = new Map()
for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1)
let total = 0
for (const [id, count] of counts) {
  const { callFrame } = byId.get(id)
  const where = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${callFrame.lineNumber + 1}`
  self.set(where, (self.get(where) ?? 0) + count)
  total += count
}
console.log(`${Math.round(load.requests)} req/s, p99 ${load.p99} ms; ${total} samples (${(dt.reduce((a, b) => a + b, 0) / 1000).toFixed(0)} ms); profile: ${join(dir, file)}`)
for (const [where, count] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
  console.log(`${(100 * count / total).toFixed(1).padStart(5)}%  ${where}`)
}
