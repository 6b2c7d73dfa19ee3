/**
 * `anvil dev` needs a Redis. When none answers, it starts a private `redis-server` from PATH, with its
 * data in ./.anvil/ (append-only file on, so queued events survive a restart of `anvil dev`), and stops it
 * on exit. Framework-free: nothing here knows about Fastify or the CLI.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { accessSync, constants as fsConstants, mkdirSync, statSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { delimiter, join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { errors } from '../src/shared/errors.js'
import { redactUrl } from '../src/redis/connect.js'

/** Where the private Redis keeps its data, relative to the working directory. */
export const DEV_REDIS_DIR = '.anvil'
export const REDIS_SERVER = 'redis-server'
const DEFAULT_REDIS_PORT = 6379
const PROBE_TIMEOUT_MS = 1000
const START_TIMEOUT_MS = 10_000
const STOP_TIMEOUT_MS = 5000
const READY_POLL_MS = 50
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

/** A Redis that answers PING, nothing listening at all, or something else (a password, another server, silence). */
export type ProbeResult = 'redis' | 'refused' | 'other'

export async function probeRedis (url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const { hostname, port } = new URL(url)
  return await new Promise((resolve) => {
    const socket = createConnection({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || DEFAULT_REDIS_PORT) })
    let reply = ''
    const done = (result: ProbeResult): void => {
      socket.destroy()
      resolve(result)
    }
    socket.setTimeout(timeoutMs, () => done('other'))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1')
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG') ? 'redis' : 'other')
    })
    socket.on('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED' ? 'refused' : 'other'))
    socket.on('close', () => done('other'))
  })
}

/** The first executable file called `name` in a PATH-style list of directories. */
export function findExecutable (name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of searchPath.split(delimiter)) {
    if (dir === '') continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, fsConstants.X_OK)
      if (statSync(candidate).isFile()) return candidate
    } catch {}
  }
  return undefined
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

export interface PrivateRedis {
  url: string
  port: number
  pid: number
  dir: string
  /** SIGTERM (Redis flushes its append-only file), then SIGKILL if it lingers. Idempotent. */
  stop (): Promise<void>
}

export interface StartOptions {
  executable: string
  port: number
  /** Data directory; created when missing. */
  dir: string
}

/** Starts redis-server on 127.0.0.1 and resolves once it answers PING. */
export async function startPrivateRedis (options: StartOptions): Promise<PrivateRedis> {
  const dir = resolve(options.dir)
  mkdirSync(dir, { recursive: true })
  const url = `redis://127.0.0.1:${options.port}`
  const child = spawn(options.executable, [
    '--port', String(options.port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes',
    '--logfile', join(dir, 'redis.log'), '--daemonize', 'no'
  ], {
    stdio: 'ignore',
    // Its own process group: a Ctrl-C in the terminal reaches only anvil, which stops Redis after the
    // worker has let go of it, rather than both at once.
    detached: true
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let spawnError: Error | undefined
  child.once('error', (err) => { spawnError = err })
  // Last resort when anvil exits without stopping it (an uncaught error): never leave Redis running.
  const killOnExit = (): void => { child.kill('SIGTERM') }
  process.once('exit', killOnExit)

  async function stop (): Promise<void> {
    process.removeListener('exit', killOnExit)
    if (child.exitCode !== null || child.signalCode !== null || spawnError !== undefined) return
    child.kill('SIGTERM')
    if (!await settlesWithin(exited, STOP_TIMEOUT_MS)) {
      child.kill('SIGKILL')
      await exited
    }
  }

  const deadline = Date.now() + START_TIMEOUT_MS
  while (await probeRedis(url) !== 'redis') {
    if (spawnError !== undefined || hasExited(child) || Date.now() > deadline) {
      await stop()
      const why = spawnError?.message ?? (hasExited(child) ? `it exited (code ${String(child.exitCode)})` : 'it did not answer in time')
      throw new errors.NO_REDIS(`could not start ${options.executable} on port ${options.port}: ${why}; see ${join(dir, 'redis.log')}`)
    }
    await sleep(READY_POLL_MS)
  }
  return { url, port: options.port, pid: child.pid as number, dir, stop }
}

function hasExited (child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

async function settlesWithin (promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms) })
  timer?.unref()
  try {
    return await Promise.race([promise.then(() => true as const), expired])
  } finally {
    clearTimeout(timer)
  }
}

export interface DevRedis {
  url: string
  /** Set when a private redis-server was started; the caller stops it on exit. */
  started?: PrivateRedis
}

export interface EnsureOptions {
  /** Where a Redis is looked for first (normally redis://127.0.0.1:6379). */
  probeUrl: string
  /** Directory the private Redis keeps its data in. */
  dir: string
  searchPath?: string
}

/**
 * Uses the Redis at `probeUrl` when it answers; otherwise starts a private one: on the probed port when
 * nothing listens there (so `redis-cli` finds it), else on a free port.
 */
export async function ensureDevRedis (options: EnsureOptions): Promise<DevRedis> {
  const found = await probeRedis(options.probeUrl)
  if (found === 'redis') return { url: options.probeUrl }
  const executable = findExecutable(REDIS_SERVER, options.searchPath)
  if (executable === undefined) {
    throw new errors.NO_REDIS(`nothing answers at ${redactUrl(options.probeUrl)} and ${REDIS_SERVER} is not on PATH; ` +
      'install Redis (apt-get install redis-server, or brew install redis) or set REDIS_URL')
  }
  const probed = new URL(options.probeUrl)
  const port = found === 'refused' && LOOPBACK.has(probed.hostname)
    ? Number(probed.port || DEFAULT_REDIS_PORT)
    : await freePort()
  const started = await startPrivateRedis({ executable, port, dir: options.dir })
  return { url: started.url, started }
}
