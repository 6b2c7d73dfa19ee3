import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { freePort } from '../../cli/dev-redis.js'
import { spawn } from './children.js'

/** A guard against a hung start, not a timing assertion: the wait ends when the server answers. */
const GIVE_UP_MS = 30_000

export { freePort }

/**
 * A free port below the kernel's ephemeral range (32768+): a test that stops its server and starts it again on
 * the same port needs it free meanwhile, and a port in that range can be taken by any client's outgoing
 * connection (two files run at once). Random, so two files rarely try the same one; taken ones are skipped.
 */
export async function stablePort (): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer()
      server.unref()
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
    })
    if (free) return port
  }
}

/** A private redis-server for one test file: never the shared one on 6379, so tests may kill it. */
export class TestRedis {
  readonly port: number
  readonly url: string
  readonly dir: string
  private process: ChildProcess | undefined
  private readonly extraArgs: string[]

  private constructor (port: number, extraArgs: string[]) {
    this.port = port
    this.url = `redis://127.0.0.1:${port}`
    this.dir = mkdtempSync(join(tmpdir(), 'anvil-redis-'))
    this.extraArgs = extraArgs
  }

  static async start (extraArgs: string[] = []): Promise<TestRedis> {
    // A port free when picked may be taken before redis-server binds it: ours then exits, and another is tried.
    for (let attempt = 1; ; attempt++) {
      const redis = new TestRedis(await stablePort(), extraArgs)
      try {
        await redis.startProcess()
        return redis
      } catch (err) {
        await redis.stop()
        if (attempt === 5) throw err
      }
    }
  }

  /** Starts redis-server on this port, and returns once the server answering there is the one it started. */
  async startProcess (): Promise<void> {
    const child = spawn('redis-server', [
      '--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
      '--dir', this.dir, ...this.extraArgs
    ], { stdio: 'ignore' })
    this.process = child
    await ownServerAnswers(child, this.port)
  }

  /** A fresh client (closed by the caller). */
  client (): Redis {
    return new Redis(this.url, { maxRetriesPerRequest: null, lazyConnect: false })
  }

  /** Runs one command on a short-lived connection. */
  async command (...args: Array<string | number>): Promise<unknown> {
    const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0 })
    // connect() rejects on its own; without a listener ioredis would also print the error.
    client.on('error', () => {})
    try {
      await client.connect()
      return await client.call(String(args[0]), ...args.slice(1))
    } finally {
      client.disconnect()
    }
  }

  /** Calls to a command since the last reset, from INFO commandstats. */
  async totalCommands (): Promise<number> {
    const info = String(await this.command('info', 'commandstats'))
    let total = 0
    for (const match of info.matchAll(/calls=(\d+)/g)) total += Number(match[1])
    return total
  }

  /** SIGSTOP: the kernel still takes connections and their commands, and the server answers none until `resume`. */
  pause (): void {
    this.process?.kill('SIGSTOP')
  }

  resume (): void {
    this.process?.kill('SIGCONT')
  }

  async kill (): Promise<void> {
    const child = this.process
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    this.process = undefined
  }

  async stop (): Promise<void> {
    await this.kill()
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/**
 * Waits until the server on `port` is `child`: INFO's process_id is its pid. Any PONG would do otherwise,
 * and a test could run against a stranger that holds the port. Fails when the child exits first.
 */
export async function ownServerAnswers (child: ChildProcess, port: number): Promise<void> {
  const deadline = Date.now() + GIVE_UP_MS
  let answered = 'nothing'
  while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 })
    client.on('error', () => {})
    try {
      await client.connect()
      const pid = /^process_id:(\d+)/m.exec(String(await client.call('info', 'server')))?.[1]
      if (Number(pid) === child.pid) return
      answered = `a redis-server of pid ${String(pid)}`
    } catch {
      // Not listening yet.
    } finally {
      client.disconnect()
    }
    await sleep(25)
  }
  throw new Error(`redis-server (pid ${String(child.pid)}) on ${port} did not answer (${answered} did); exit ${String(child.exitCode ?? child.signalCode)}`)
}

/** What the measuring connection itself sends: the handshake, the reset and the INFO that reads the counts. */
const MEASURING = /^(info|hello|config|client)(\||$)/

/** Commands Redis ran since `CONFIG RESETSTAT`, leaving out the ones the measurement sends. */
export async function commandsSinceReset (redis: Pick<TestRedis, 'command'>): Promise<Record<string, number>> {
  const info = String(await redis.command('info', 'commandstats'))
  const counts: Record<string, number> = {}
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = match[1] as string
    // A cluster answers for every master: the counts add up.
    if (!MEASURING.test(name)) counts[name] = (counts[name] ?? 0) + Number(match[2])
  }
  return counts
}
