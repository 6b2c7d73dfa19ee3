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
/** Ports tried, each taken before redis-server could bind it, before giving up. */
const START_ATTEMPTS = 5
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

/** A Redis that answers PING, nothing listening at all, or something else (a password, another server, silence). */
export type ProbeResult = 'redis' | 'refused' | 'other'

export async function probeRedis (url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  return await ask(url, 'PING', timeoutMs,
    (reply) => reply.includes('\r\n') ? (reply.startsWith('+PONG') ? 'redis' : 'other') : undefined,
    (err) => err?.code === 'ECONNREFUSED' ? 'refused' : 'other')
}

/**
 * The pid of the Redis answering at `url` (INFO server's process_id), or null when nothing answers as Redis:
 * how a started server is told from another that holds the port.
 */
export async function redisPid (url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<number | null> {
  return await ask<number | null>(url, 'INFO server', timeoutMs, (reply) => {
    const pid = /\r\nprocess_id:(\d+)\r\n/.exec(reply)?.[1]
    if (pid !== undefined) return Number(pid)
    // An error or another protocol's line, or the whole reply without a pid.
    return (!reply.startsWith('$') && reply.includes('\r\n')) || reply.endsWith('\r\n\r\n') ? null : undefined
  }, () => null)
}

/**
 * Sends one inline command on a raw socket and reads the reply until `read` decides (undefined: read on);
 * a refused, closed or silent connection is `failed`'s answer. No client library: a stranger may hold the port.
 */
async function ask<T> (url: string, command: string, timeoutMs: number, read: (reply: string) => T | undefined,
  failed: (err?: NodeJS.ErrnoException) => T): Promise<T> {
  const { hostname, port } = new URL(url)
  return await new Promise((resolve) => {
    const socket = createConnection({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || DEFAULT_REDIS_PORT) })
    let reply = ''
    const done = (result: T): void => {
      socket.destroy()
      resolve(result)
    }
    socket.setTimeout(timeoutMs, () => done(failed()))
    socket.on('connect', () => socket.write(`${command}\r\n`))
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1')
      const result = read(reply)
      if (result !== undefined) done(result)
    })
    socket.on('error', (err: NodeJS.ErrnoException) => done(failed(err)))
    socket.on('close', () => done(failed()))
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

/** Thrown by startPrivateRedis when another process holds the port: the caller may try another. */
class PortTaken extends Error {}

/**
 * Starts redis-server on 127.0.0.1, on `options.port` or, when another process holds that, on a free port:
 * redis-server cannot take port 0, so a port free when picked may be taken before it binds it.
 */
export async function startPrivateRedis (options: StartOptions): Promise<PrivateRedis> {
  let port = options.port
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn({ ...options, port })
    } catch (err) {
      if (!(err instanceof PortTaken)) throw err
      if (attempt === START_ATTEMPTS) throw new errors.NO_REDIS(`could not start ${options.executable}: ${err.message}, as were the ${START_ATTEMPTS - 1} free ports tried after it`)
      port = await freePort()
    }
  }
}

/** Resolves once the server answering on the port is the one it started (its pid), not another that holds the port. */
async function startOn (options: StartOptions): Promise<PrivateRedis> {
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
  for (;;) {
    const pid = await redisPid(url)
    if (pid === child.pid) return { url, port: options.port, pid, dir, stop }
    if (spawnError !== undefined || hasExited(child) || pid !== null || Date.now() > deadline) {
      await stop()
      if (spawnError === undefined && await probeRedis(url) !== 'refused') throw new PortTaken(`port ${options.port} is taken`)
      const why = spawnError?.message ?? (hasExited(child) ? `it exited (code ${String(child.exitCode)})` : 'it did not answer in time')
      throw new errors.NO_REDIS(`could not start ${options.executable} on port ${options.port}: ${why}; see ${join(dir, 'redis.log')}`)
    }
    await sleep(READY_POLL_MS)
  }
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
