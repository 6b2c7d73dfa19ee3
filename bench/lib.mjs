// Shared bench plumbing: a private redis-server, servers in their own processes, the load in another.
import { execFileSync, fork, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
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

/** Starts a server module (it sends 'ready' over IPC) or a command; resolves once it answers. */
export async function startServer ({ module, args = [], env }) {
  const port = await freePort()
  const child = fork(module, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    try { await fetch(url + '/webhooks', { method: 'POST' }); break } catch { await sleep(50) }
  }
  return {
    url,
    pid: child.pid,
    async stop () {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await Promise.race([exited, sleep(5000)])
      child.kill('SIGKILL')
    }
  }
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
