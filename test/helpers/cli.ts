/**
 * The `anvil` CLI as users run it: `node dist/cli/anvil.js` in a child process, against a private
 * redis-server (never the shared one on 6379: every process gets REDIS_URL or a probe URL explicitly).
 * Shared by the test/cli/*.test.ts files.
 */
import type { Test } from 'tap'
import { execFile, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Queue, UnrecoverableError } from 'bullmq'
import { DEFAULT_PREFIX } from '../../src/shared/constants.js'
import { deadLetterQueueName } from '../../src/queue/open-queues.js'
import { findExecutable } from '../../cli/dev-redis.js'
import { Ingress } from '../../src/inbound/ingress.js'
import { resolveIngressOptions } from '../../src/inbound/ingress-options.js'
import { createWorker } from '../../src/worker/worker.js'
import { ROOT } from './root.js'
import { spawn } from './children.js'
import { eventually } from './eventually.js'
import type { TestRedis } from './redis.js'

export { ROOT }
export const CLI = join(ROOT, 'dist', 'cli', 'anvil.js')
/**
 * A guard against a hung child, not a timing assertion: every wait below ends on an event first. 90 s, since
 * `anvil serve` took 33 s to listen on the shared 2-core machine at a load of 30 (3 s when it is quiet).
 */
export const GIVE_UP_MS = 90_000
export const NEVER_PRINTED = 'whsec_never_print_me'
/** curl runs the printed commands as users would; without it, fetch sends the same requests. */
export const HAS_CURL = findExecutable('curl') !== undefined

export function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Only what the test gives: no REDIS_URL or WEBHOOK_SECRET leaks in from the environment running the tests. */
export function cleanEnv (extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...extra }
}

export interface Options { env?: Record<string, string>, cwd?: string, node?: string }

export class Cli {
  readonly child: ChildProcess
  readonly lines: string[] = []
  stderr = ''
  readonly exited: Promise<number | null>
  private readonly waiters = new Set<() => void>()

  constructor (args: string[], options: Options = {}) {
    this.child = spawn(options.node ?? process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? ROOT, env: cleanEnv(options.env ?? {}), stdio: ['ignore', 'pipe', 'pipe']
    })
    let partial = ''
    this.child.stdout?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n')
      partial = parts.pop() ?? ''
      this.lines.push(...parts)
      for (const wake of this.waiters) wake()
    })
    this.child.stderr?.on('data', (chunk: Buffer) => { this.stderr += chunk.toString('utf8') })
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => {
      for (const wake of this.waiters) wake()
      resolve(code)
    }))
  }

  get output (): string { return this.lines.join('\n') + this.stderr }

  /** The first stdout line that `match` accepts; fails if the process exits first. */
  async line (match: (line: string) => boolean): Promise<string> {
    const deadline = Date.now() + GIVE_UP_MS
    for (;;) {
      const found = this.lines.find(match)
      if (found !== undefined) return found
      if (this.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`line not found; exit ${String(this.child.exitCode)}; output:\n${this.output}`)
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => { this.waiters.delete(wake); clearTimeout(timer); resolve() }
        const timer = setTimeout(wake, 500)
        this.waiters.add(wake)
      })
    }
  }

  /** The first JSON log line with this `msg` (and these fields). */
  async log (msg: string, fields: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const line = await this.line((text) => {
      const entry = parseJson(text)
      return entry?.msg === msg && Object.entries(fields).every(([key, value]) => entry[key] === value)
    })
    return JSON.parse(line) as Record<string, unknown>
  }

  /** The port a process started on port 0 bound, from its log line `msg` (no port picked beforehand, so no race for it). */
  async listeningPort (msg: string): Promise<number> {
    return Number((await this.log(msg)).port)
  }

  /**
   * The TCP port the process listens on, from the kernel's socket table (Linux's /proc): for a process that
   * logs nothing to read its port from (LOG_LEVEL=warn). Fails if it exits first.
   */
  async boundPort (): Promise<number> {
    const deadline = Date.now() + GIVE_UP_MS
    for (;;) {
      const [port] = listeningPorts(this.child.pid as number)
      if (port !== undefined) return port
      if (this.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`no listening port; exit ${String(this.child.exitCode)}; output:\n${this.output}`)
      }
      await sleep(25)
    }
  }

  async stop (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    this.child.kill(signal)
    return await this.exited
  }
}

/** The sockets of `pid`, by inode: its fds that are sockets (/proc/<pid>/fd); empty once it is gone. */
function socketsOf (pid: number): Set<string> {
  const sockets = new Set<string>()
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]
        if (inode !== undefined) sockets.add(inode)
      } catch {} // closed meanwhile
    }
  } catch {} // the process is gone
  return sockets
}

interface TcpSocket { localPort: number, remotePort: number, state: string, unread: number, inode: string }

/** The kernel's TCP sockets (Linux's /proc/net/tcp{,6}). */
function tcpSockets (): TcpSocket[] {
  const found: TcpSocket[] = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      // sl, local address:port (hex), remote, state (0A: LISTEN, 01: ESTABLISHED), tx_queue:rx_queue, timer, retransmits, uid, timeout, inode
      const fields = line.trim().split(/\s+/)
      if (fields.length < 10) continue
      const port = (address: string | undefined): number => parseInt(address?.split(':')[1] ?? '', 16)
      found.push({ localPort: port(fields[1]), remotePort: port(fields[2]), state: fields[3] ?? '', unread: parseInt(fields[4]?.split(':')[1] ?? '0', 16), inode: fields[9] ?? '' })
    }
  }
  return found
}

/** The TCP ports `pid` listens on: its sockets found in LISTEN state. */
export function listeningPorts (pid: number): number[] {
  const sockets = socketsOf(pid)
  return tcpSockets().filter((socket) => socket.state === '0A' && sockets.has(socket.inode)).map((socket) => socket.localPort)
}

/**
 * Whether `pid` waits on the server at `port`: it sent bytes on one of its connections there that the server has
 * not read yet (unread in the server's end of that connection), so it waits for an answer.
 */
export function waitsOn (pid: number, port: number): boolean {
  const sockets = socketsOf(pid)
  const table = tcpSockets()
  const clientPorts = new Set(table.filter((socket) => sockets.has(socket.inode) && socket.remotePort === port).map((socket) => socket.localPort))
  return table.some((socket) => socket.localPort === port && clientPorts.has(socket.remotePort) && socket.state === '01' && socket.unread > 0)
}

/** A port held open by this test file until it ends: nothing else can listen on it meanwhile. */
export async function holdPort (t: Test): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(0, '127.0.0.1', resolve) })
  t.teardown(() => { server.close() })
  return (server.address() as AddressInfo).port
}

/** The exit code when the process stops by itself; 'running' once `started` resolves (a log line, say). */
export async function outcome (cli: Cli, started: Promise<unknown>): Promise<number | null | 'running'> {
  return await Promise.race([cli.exited, started.then(() => 'running' as const, async () => await cli.exited)])
}

export function parseJson (text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

export function startCli (t: Test, args: string[], options: Options = {}): Cli {
  const cli = new Cli(args, options)
  t.teardown(() => { if (cli.child.exitCode === null) cli.child.kill('SIGKILL') })
  return cli
}

/** Runs the CLI to completion. */
export async function runCli (args: string[], options: Options = {}): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const cli = new Cli(args, options)
  const code = await cli.exited
  return { code, stdout: cli.lines.join('\n'), stderr: cli.stderr }
}

/**
 * Runs the CLI against a Redis too busy to answer: stopped (SIGSTOP), it takes the connection (the kernel does)
 * and answers nothing; it resumes once the command waits on it (its first bytes unread there), never before.
 */
export async function runCliOnStoppedRedis (redis: Pick<TestRedis, 'pause' | 'resume' | 'port'>, args: string[], options: Options = {}): Promise<{ code: number | null, stdout: string, stderr: string }> {
  redis.pause()
  try {
    const cli = new Cli(args, options)
    await eventually('the command to wait on Redis', () => cli.child.exitCode !== null || waitsOn(cli.child.pid as number, redis.port), GIVE_UP_MS)
    redis.resume()
    const code = await cli.exited
    return { code, stdout: cli.lines.join('\n'), stderr: cli.stderr }
  } finally {
    redis.resume()
  }
}

/** A shell command line, as a user would paste it. */
export async function shell (script: string, env: Record<string, string> = {}): Promise<string> {
  return await new Promise((resolve, reject) => {
    execFile('sh', ['-c', script], { env: cleanEnv(env) }, (err, stdout) => err === null ? resolve(stdout) : reject(err))
  })
}

/** A printed `curl` line, run as is; without curl, the same request (URL, -H, --data) through fetch. */
export async function sendPrinted (line: string): Promise<{ status: number, body: unknown }> {
  if (HAS_CURL) return curlResponse(await shell(line))
  const url = /http:\/\/\S+/.exec(line)?.[0] as string
  const headers = Object.fromEntries([...line.matchAll(/-H '([^:']+): ([^']*)'/g)].map((m) => [m[1] as string, m[2] as string]))
  const response = await fetch(url, { method: 'POST', headers, body: /--data '([^']*)'/.exec(line)?.[1] })
  return { status: response.status, body: await response.json() }
}

/** Status and JSON body of `curl -i` output. */
export function curlResponse (output: string): { status: number, body: unknown } {
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(output)?.[1])
  return { status, body: JSON.parse(output.slice(output.lastIndexOf('\r\n\r\n') + 4)) }
}

export function inspect (t: Test, redisUrl: string, name: string): Queue {
  const queue = new Queue(name, { connection: { url: redisUrl }, prefix: DEFAULT_PREFIX })
  t.teardown(() => queue.close())
  return queue
}

export async function enqueue (redisUrl: string, queueName: string, eventId: string, body: object = { id: eventId, type: 'test.ping' }): Promise<string> {
  const ingress = new Ingress(resolveIngressOptions({ redis: redisUrl, secret: 'unused_0123456789', queueName }))
  try {
    const { jobId } = await ingress.enqueue(body, { eventId })
    return jobId
  } finally {
    await ingress.close()
  }
}

/** Dead letters made the real way: events whose handler fails for good, on a worker in this process. */
export async function deadLetters (t: Test, redisUrl: string, queueName: string, count: number): Promise<string[]> {
  for (let i = 0; i < count; i++) await enqueue(redisUrl, queueName, `evt_dead_${i}`)
  const worker = createWorker(() => { throw new UnrecoverableError('boom') }, { redis: redisUrl, queueName, sweepIntervalMs: 0 })
  await worker.start()
  const dead = inspect(t, redisUrl, deadLetterQueueName(queueName))
  await eventually('dead.count() === count', async () => await dead.count() === count ? true : undefined)
  await worker.close()
  return (await dead.getJobs(['wait'], 0, -1, true)).map((job) => job.id as string)
}

export function isRunning (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The README's first fenced block in `lang` that holds `text`, as written (indented list blocks unindented). */
export function readmeBlock (lang: string, text: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  for (const match of readme.matchAll(/^( *)```(\w+)\n([\s\S]*?)^ *```$/gm)) {
    const [, indent = '', language, body = ''] = match
    if (language !== lang || !body.includes(text)) continue
    return body.split('\n').map((line) => line.startsWith(indent) ? line.slice(indent.length) : line).join('\n')
  }
  throw new Error(`README.md has no ${lang} block holding ${JSON.stringify(text)}`)
}

/** The issue's quickstart, verbatim: signed with openssl from $WEBHOOK_SECRET, sent with curl. */
export const QUICKSTART = `body='{"id":"evt_1","type":"test.ping"}'; sig=$(printf '%s' "$body" | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -hex | sed 's/^.* //'); curl -i -X POST http://127.0.0.1:3000/webhooks -H 'content-type: application/json' -H "x-signature: sha256=$sig" --data "$body"`
