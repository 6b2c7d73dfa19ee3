// Shared bench plumbing: a private redis-server, servers in their own processes, the load in another.
import { execFileSync, fork, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'

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
  const dir = mkdtempSync(join(tmpdir(), 'anvil-bench-'))
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...args], { stdio: 'ignore' })
  const url = `redis://127.0.0.1:${port}`
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => 50 })
  client.on('error', () => {})
  for (let i = 0; i < 100; i++) {
    try { await client.connect(); break } catch { await sleep(50) }
  }
  return {
    url,
    client,
    async stop () {
      client.disconnect()
      child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
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
    const child = fork(module, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
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
            await Promise.race([done, sleep(5000)])
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

/** User + system CPU seconds a process has used so far (Linux /proc). */
export function processCpuSeconds (pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  // utime and stime are fields 14 and 15 of stat; after the command name they sit at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** CPU seconds redis-server has used, from INFO cpu. */
export async function redisCpuSeconds (client) {
  const info = await client.info('cpu')
  const user = Number(info.match(/used_cpu_user:([\d.]+)/)?.[1] ?? 0)
  const sys = Number(info.match(/used_cpu_sys:([\d.]+)/)?.[1] ?? 0)
  return user + sys
}

export async function runLoad (options) {
  const child = fork(new URL('./load.mjs', import.meta.url), [JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  await new Promise((resolve) => child.once('exit', resolve))
  return JSON.parse(out)
}

export function machine () {
  let redis = 'unknown'
  try { redis = execFileSync('redis-server', ['--version']).toString().match(/v=(\S+)/)?.[1] ?? redis } catch {}
  let commit = 'unknown'
  try { commit = execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim() } catch {}
  return { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version, redis, commit, date: new Date().toISOString() }
}

export function spread (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]
  return { median, min: sorted[0], max: sorted.at(-1), runs: values.length }
}
