// Shared bench plumbing: a private redis-server, servers in their own processes, the load in another.
// Every process a bench starts is tracked here and killed when the bench exits, also on an error or a signal.
import { execFileSync, fork, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import pg from 'pg'

/** Children still running and temporary directories still there; cleared when the bench exits, however it exits. */
const children = new Map()
const tempDirs = new Set()

/**
 * Registers a child process so an exit (normal, thrown or by signal) kills it; returns the child. A child that
 * is itself a bench gets SIGTERM, so that it can stop its own children in turn.
 */
export function track (child, signal = 'SIGKILL') {
  children.set(child, signal)
  child.once('exit', () => children.delete(child))
  return child
}

/** A temporary directory removed when the bench exits. */
export function tempDir (prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.add(dir)
  return dir
}

function cleanUp () {
  for (const [child, signal] of children) child.kill(signal)
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
}
process.once('exit', cleanUp)
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => { cleanUp(); process.exit(signal === 'SIGINT' ? 130 : 143) })
}

/**
 * The bench's options plus the two every bench takes: `--quick` (a tiny load that only shows the bench still
 * runs; used by test/bench-smoke.test.ts) and `--section-out FILE` (its section of the combined report, as JSON,
 * for bench/run.mjs). Numbers in `options` are given as strings with their full-run defaults.
 */
export function benchArgs (options) {
  return checkedArgs({ ...options, quick: { type: 'boolean', default: false }, 'section-out': { type: 'string' } })
}

/** parseArgs, with one line and exit code 2 for an unknown or malformed option. */
export function checkedArgs (options) {
  const fail = (message) => {
    console.error(`${process.argv[1]}: ${message}`)
    process.exit(2)
  }
  let values
  try {
    values = parseArgs({ options }).values
  } catch (err) {
    fail(err.message)
  }
  // An option whose default is a number (or a list of them) takes only positive numbers: `--runs x` would
  // otherwise run nothing and report NaN.
  for (const [name, option] of Object.entries(options)) {
    if (typeof option.default !== 'string' || !/^[\d.,]+$/.test(option.default)) continue
    const given = values[name]
    if (!/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/.test(given) || given.split(',').some((x) => Number(x) <= 0)) {
      fail(`--${name} takes ${option.default.includes(',') ? 'a comma-separated list of positive numbers' : 'a positive number'}, got "${given}"`)
    }
  }
  return values
}

/**
 * Ends a bench: prints its section (markdown) and, under `--section-out`, writes it as JSON for the combined
 * report. `section` is { id, title, markdown: string[], data }.
 */
export function emitSection (section, values) {
  const env = machine()
  if (values['section-out'] !== undefined) writeFileSync(values['section-out'], JSON.stringify({ ...section, machine: env }) + '\n')
  console.log([`## ${section.title}`, '', ...section.markdown, '', machineLine(env)].join('\n'))
}

export function machineLine (env) {
  return `Commit ${env.commit}, ${env.date}. ${env.cpu}, ${env.cores} cores, Node ${env.node}, Redis ${env.redis}.`
}

/**
 * The PostgreSQL server the database benches make their databases on (as its `postgres` database):
 * `ANVIL_BENCH_PG_URL`, else the tests' `ANVIL_TEST_PG_URL`, else the local server as `postgres`.
 */
export const BENCH_PG_URL = process.env.ANVIL_BENCH_PG_URL ?? process.env.ANVIL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** Runs one statement on BENCH_PG_URL's `postgres` database, on a connection of its own. */
async function adminQuery (sql) {
  const client = new pg.Client({ connectionString: BENCH_PG_URL })
  await client.connect()
  try { await client.query(sql) } finally { await client.end() }
}

/** A database of the bench's own on BENCH_PG_URL's server: its name and URL, and `drop()` (its connections too). */
export async function benchDatabase (label) {
  const name = `anvil_bench_${label}_${process.pid}_${Math.random().toString(16).slice(2, 8)}`
  await adminQuery(`CREATE DATABASE ${name}`)
  const url = Object.assign(new URL(BENCH_PG_URL), { pathname: `/${name}` }).toString()
  return { name, url, drop: async () => await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

export async function freePort () {
  return await new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

export async function startRedis (args = []) {
  const port = await freePort()
  const dir = tempDir('anvil-bench-')
  const child = track(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...args], { stdio: 'ignore' }))
  const url = `redis://127.0.0.1:${port}`
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => 50 })
  client.on('error', () => {})
  // After a first refused attempt ioredis keeps reconnecting by itself (and connect() only says it is busy).
  client.connect().catch(() => {})
  for (let i = 0; i < 200 && client.status !== 'ready'; i++) await sleep(25)
  if (client.status !== 'ready') throw new Error('redis-server did not start')
  return {
    url,
    client,
    async stop () {
      client.disconnect()
      child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
      tempDirs.delete(dir)
    }
  }
}

/**
 * Starts a server module (or the CLI with `args`) in its own process; resolves once it answers HTTP.
 * A port taken between picking and listening (other processes on the machine) means a retry on another.
 */
export async function startServer ({ module, args = [], env }) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort()
    const child = track(fork(module, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }))
    const url = `http://127.0.0.1:${port}`
    let exited = false
    child.once('exit', () => { exited = true })
    for (let i = 0; i < 400 && !exited; i++) {
      try {
        await fetch(url + '/webhooks', { method: 'POST' })
        return {
          url,
          pid: child.pid,
          cpuSeconds: () => processCpuSeconds(child.pid),
          async stop () {
            if (exited) return
            const done = new Promise((resolve) => child.once('exit', resolve))
            child.kill('SIGTERM')
            await Promise.race([done, sleep(5000, undefined, { ref: false })])
            child.kill('SIGKILL')
          }
        }
      } catch {
        await sleep(50)
      }
    }
    child.kill('SIGKILL')
  }
  throw new Error(`${module} did not start`)
}

/** Counts a drain's completions: `tick()` at each, `finished` resolves at the `jobs`-th, `rate()` per second from the first to the last. */
export function completions (jobs) {
  let first = 0
  let last = 0
  let count = 0
  let done
  const finished = new Promise((resolve) => { done = resolve })
  return {
    finished,
    get count () { return count },
    tick () {
      const now = performance.now()
      if (++count === 1) first = now
      if (count === jobs) { last = now; done() }
    },
    rate: () => (jobs - 1) / ((last - first) / 1000)
  }
}

/** User + system CPU seconds a process has used so far (Linux /proc). */
export function processCpuSeconds (pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  // utime and stime are fields 14 and 15 of stat; after the command name they sit at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * CPU seconds of PostgreSQL's backends serving `dbName`, and apart, the server's background processes (WAL
 * writer, checkpointer: shared with whatever else uses the server). `pool` is any client on the server.
 */
export async function postgresCpuSeconds (pool, dbName) {
  const { rows } = await pool.query(`SELECT pid, datname = $1 AS ours FROM pg_stat_activity WHERE datname = $1 OR backend_type NOT IN ('client backend', 'autovacuum worker')`, [dbName])
  const total = { pg: 0, pgBackground: 0 }
  for (const { pid, ours } of rows) {
    // A backend may end between the query and the read.
    try { total[ours ? 'pg' : 'pgBackground'] += processCpuSeconds(pid) } catch {}
  }
  return total
}

/** Bytes redis-server holds (`used_memory` of INFO memory). */
export async function redisUsedMemory (client) {
  return Number((await client.info('memory')).match(/used_memory:(\d+)/)?.[1] ?? 0)
}

/** CPU seconds redis-server has used, from INFO cpu. */
export async function redisCpuSeconds (client) {
  const info = await client.info('cpu')
  const user = Number(info.match(/used_cpu_user:([\d.]+)/)?.[1] ?? 0)
  const sys = Number(info.match(/used_cpu_sys:([\d.]+)/)?.[1] ?? 0)
  return user + sys
}

export async function runLoad (options) {
  const child = track(fork(new URL('./load.mjs', import.meta.url), [JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] }))
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  if (code !== 0) throw new Error(`load generator exited with ${code}`)
  return JSON.parse(out)
}

export function machine () {
  let redis = 'unknown'
  try { redis = execFileSync('redis-server', ['--version']).toString().match(/v=(\S+)/)?.[1] ?? redis } catch {}
  let commit = 'unknown'
  try {
    const cwd = new URL('..', import.meta.url)
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd }).toString().trim()
    // Figures from uncommitted code must not be credited to the commit.
    if (execFileSync('git', ['status', '--porcelain', '--', 'src', 'plugins', 'cli', 'bench', 'index.ts'], { cwd }).toString().trim() !== '') commit += '-dirty'
  } catch {}
  return { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version, redis, commit, date: new Date().toISOString() }
}

export function spread (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]
  return { median, min: sorted[0], max: sorted.at(-1), runs: values.length }
}

/** `median [min–max]` of a spread, rounded to `digits` decimals. */
export function showSpread ({ median, min, max, runs }, digits = 0) {
  const f = (x) => x.toFixed(digits)
  return runs === 1 ? f(median) : `${f(median)} [${f(min)}–${f(max)}]`
}

/** The q-quantile (0–1) of a sorted array, nearest rank. */
export function quantile (sorted, q) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

/** `fn`'s ms over `runs` runs, after one unmeasured run that warms the caches and the plan. */
export async function timed (runs, fn) {
  const ms = []
  for (let run = 0; run <= runs; run++) {
    const started = performance.now()
    await fn()
    if (run > 0) ms.push(performance.now() - started)
  }
  return ms
}

/** p50 and p99 of a sample of ms. */
export function latencySummary (ms) {
  const sorted = [...ms].sort((a, b) => a - b)
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), samples: ms.length }
}

/** An outgoing delivery store with secrets from memory and attempts dropped: the engine's own cost, without a database. */
export function memoryDeliveryStore (secret) {
  return {
    loadSecrets: async () => [secret],
    loadEndpoint: async () => ({ enabled: true, rateLimit: null, secrets: [secret] }),
    recordAttempt: async () => ({ failingSince: null })
  }
}

/** Forks a CLI command (`anvil worker …`) tracked for clean-up; resolves `stop()` once it has exited. */
export function forkTracked (module, args, env, options = {}) {
  const child = track(fork(module, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'], ...options }))
  let exited = child.exitCode !== null
  child.once('exit', () => { exited = true })
  return {
    child,
    async stop () {
      if (exited) return
      const done = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await Promise.race([done, sleep(10000, undefined, { ref: false })])
      child.kill('SIGKILL')
    }
  }
}

/** Waits (at most giveUpMs) for `healthy` latencies, closes the worker and queue, and gives their quantiles. */
export async function settleLatencies ({ latencies, healthy, worker, queue, giveUpMs }) {
  const deadline = Date.now() + giveUpMs
  while (latencies.length < healthy && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  await worker.close()
  await queue.close()
  const sorted = [...latencies].sort((a, b) => a - b)
  return { healthy, delivered: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) }
}
