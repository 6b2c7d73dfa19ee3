import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Cluster, Redis } from 'ioredis'
import { spawn } from './children.js'
import { freePort, ownServerAnswers } from './redis.js'

const SLOTS = 16384
const BUS_PORT_OFFSET = 10000
/** Commands that act on a whole node, not on a key: run on every master and combined. */
const NODE_WIDE = new Set(['info', 'config', 'keys', 'client', 'dbsize', 'flushall', 'debug'])

/**
 * A real 3-master Redis Cluster on free loopback ports, made with CLUSTER ADDSLOTSRANGE and CLUSTER MEET
 * (no redis-cli needed). Same surface as TestRedis where the contract tests use it.
 */
export class TestCluster {
  readonly url: string
  private readonly processes: ChildProcess[] = []
  private readonly clients: Array<Redis | Cluster> = []

  private constructor (readonly ports: number[], private readonly dir: string) {
    this.url = 'redis+cluster://' + ports.map((port) => `127.0.0.1:${port}`).join(',')
  }

  static async start (masters = 3): Promise<TestCluster> {
    // A port free when picked may be taken before a node binds it: that node exits, and new ports are tried.
    for (let attempt = 1; ; attempt++) {
      const ports: number[] = []
      for (let i = 0; i < masters; i++) ports.push(await freeClusterPort())
      const cluster = new TestCluster(ports, mkdtempSync(join(tmpdir(), 'anvil-cluster-')))
      try {
        await cluster.boot()
        return cluster
      } catch (err) {
        await cluster.stop()
        if (attempt === 5) throw err
      }
    }
  }

  private async boot (): Promise<void> {
    for (const port of this.ports) {
      this.processes.push(spawn('redis-server', [
        '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir,
        '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000'
      ], { stdio: 'ignore' }))
    }
    await Promise.all(this.processes.map(async (child, i) => await ownServerAnswers(child, this.ports[i] as number)))
    const nodes = this.ports.map((port) => new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 }))
    for (const node of nodes) node.on('error', () => {})
    try {
      for (const node of nodes) await connectWithRetry(node)
      const share = Math.ceil(SLOTS / nodes.length)
      await Promise.all(nodes.map((node, i) =>
        node.call('cluster', 'addslotsrange', String(i * share), String(Math.min(SLOTS, (i + 1) * share) - 1))))
      for (const port of this.ports.slice(1)) await nodes[0]?.call('cluster', 'meet', '127.0.0.1', String(port))
      for (let i = 0; i < 200; i++) {
        const states = await Promise.all(nodes.map(async (node) => String(await node.call('cluster', 'info'))))
        if (states.every((info) => info.includes('cluster_state:ok'))) return
        await sleep(50)
      }
      throw new Error('the test cluster did not reach cluster_state:ok')
    } finally {
      for (const node of nodes) node.disconnect()
    }
  }

  /** A cluster client (closed by stop(), or earlier by the caller). */
  client (): Cluster {
    const client = new Cluster(this.seeds(), { redisOptions: { maxRetriesPerRequest: null } })
    client.on('error', () => {})
    this.clients.push(client)
    return client
  }

  /** What BullMQ takes as `connection` for this target. */
  connection (): Cluster {
    return this.client()
  }

  /** Runs a command: by key through the cluster, or on every master for node-wide commands. */
  async command (...args: Array<string | number>): Promise<unknown> {
    const name = String(args[0]).toLowerCase()
    const rest = args.slice(1).map(String)
    if (!NODE_WIDE.has(name)) {
      const client = new Cluster(this.seeds(), { lazyConnect: false })
      client.on('error', () => {})
      try { return await client.call(name, ...rest) } finally { client.disconnect() }
    }
    const results = await Promise.all(this.ports.map(async (port) => {
      const node = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0 })
      node.on('error', () => {})
      try { return await node.call(name, ...rest) } finally { node.disconnect() }
    }))
    if (name === 'keys') return results.flat()
    if (results.every((r) => typeof r === 'string')) return results.join('\n')
    return results[0]
  }

  async stop (): Promise<void> {
    for (const client of this.clients) client.disconnect()
    await Promise.all(this.processes.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }))
    rmSync(this.dir, { recursive: true, force: true })
  }

  private seeds (): Array<{ host: string, port: number }> {
    return this.ports.map((port) => ({ host: '127.0.0.1', port }))
  }
}

/** A node needs its port and the cluster bus port (port + 10000) free, and both under 65536. */
async function freeClusterPort (): Promise<number> {
  for (;;) {
    const port = await freePort()
    if (port + BUS_PORT_OFFSET <= 65535 && await isFree(port + BUS_PORT_OFFSET)) return port
  }
}

async function isFree (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

async function connectWithRetry (node: Redis): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await node.connect()
      return
    } catch {
      await sleep(25)
    }
  }
  throw new Error('redis-server did not start')
}
