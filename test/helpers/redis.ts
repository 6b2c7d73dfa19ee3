import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { freePort } from '../../cli/dev-redis.js'

export { freePort }

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
    const redis = new TestRedis(await freePort(), extraArgs)
    await redis.startProcess()
    return redis
  }

  async startProcess (): Promise<void> {
    this.process = spawn('redis-server', [
      '--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
      '--dir', this.dir, ...this.extraArgs
    ], { stdio: 'ignore' })
    await this.waitFor(true)
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

  async kill (): Promise<void> {
    const child = this.process
    if (child === undefined || child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    this.process = undefined
  }

  async stop (): Promise<void> {
    await this.kill()
    rmSync(this.dir, { recursive: true, force: true })
  }

  private async waitFor (up: boolean): Promise<void> {
    for (let i = 0; i < 200; i++) {
      try {
        if (await this.command('ping') === 'PONG' && up) return
      } catch {
        if (!up) return
      }
      await sleep(25)
    }
    throw new Error(`redis-server on ${this.port} did not come ${up ? 'up' : 'down'}`)
  }
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
