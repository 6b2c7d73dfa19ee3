/**
 * The `anvil` CLI as users run it: `node dist/cli/anvil.js` in a child process, against a private
 * redis-server (never the shared one on 6379: every process gets REDIS_URL or a probe URL explicitly).
 */
import t, { type Test } from 'tap'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { Queue, UnrecoverableError } from 'bullmq'
import { DEFAULT_PREFIX } from '../src/constants.js'
import { deadLetterQueueName } from '../src/dead-letter.js'
import { ensureDevRedis, findExecutable, probeRedis } from '../src/dev-redis.js'
import { Ingress } from '../src/ingress.js'
import { resolveIngressOptions } from '../src/options.js'
import { createWorker } from '../src/worker.js'
import { createLogger } from '../cli/logging.js'
import { localUrl, opensslCurl, signedCurl } from '../cli/quickstart.js'
import { freePort, TestRedis } from './helpers/redis.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const CLI = join(ROOT, 'dist', 'cli', 'anvil.js')
/** A guard against a hung child, not a timing assertion: every wait below ends on an event first. */
const GIVE_UP_MS = 30_000
const NEVER_PRINTED = 'whsec_never_print_me'
/** curl runs the printed commands as users would; without it, fetch sends the same requests. */
const HAS_CURL = findExecutable('curl') !== undefined

const redis = await TestRedis.start()
t.teardown(() => redis.stop())

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Only what the test gives: no REDIS_URL or WEBHOOK_SECRET leaks in from the environment running the tests. */
function cleanEnv (extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...extra }
}

interface Options { env?: Record<string, string>, cwd?: string, node?: string }

class Cli {
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

  async stop (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    this.child.kill(signal)
    return await this.exited
  }
}

function parseJson (text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

function startCli (t: Test, args: string[], options: Options = {}): Cli {
  const cli = new Cli(args, options)
  t.teardown(() => { if (cli.child.exitCode === null) cli.child.kill('SIGKILL') })
  return cli
}

/** Runs the CLI to completion. */
async function runCli (args: string[], options: Options = {}): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const cli = new Cli(args, options)
  const code = await cli.exited
  return { code, stdout: cli.lines.join('\n'), stderr: cli.stderr }
}

/** A shell command line, as a user would paste it. */
async function shell (script: string, env: Record<string, string> = {}): Promise<string> {
  return await new Promise((resolve, reject) => {
    execFile('sh', ['-c', script], { env: cleanEnv(env) }, (err, stdout) => err === null ? resolve(stdout) : reject(err))
  })
}

/** A printed `curl` line, run as is; without curl, the same request (URL, -H, --data) through fetch. */
async function sendPrinted (line: string): Promise<{ status: number, body: unknown }> {
  if (HAS_CURL) return curlResponse(await shell(line))
  const url = /http:\/\/\S+/.exec(line)?.[0] as string
  const headers = Object.fromEntries([...line.matchAll(/-H '([^:']+): ([^']*)'/g)].map((m) => [m[1] as string, m[2] as string]))
  const response = await fetch(url, { method: 'POST', headers, body: /--data '([^']*)'/.exec(line)?.[1] })
  return { status: response.status, body: await response.json() }
}

/** Status and JSON body of `curl -i` output. */
function curlResponse (output: string): { status: number, body: unknown } {
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(output)?.[1])
  return { status, body: JSON.parse(output.slice(output.lastIndexOf('\r\n\r\n') + 4)) }
}

async function eventually<T> (read: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + GIVE_UP_MS
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('condition never held')
    await sleep(25)
  }
}

function inspect (t: Test, name: string): Queue {
  const queue = new Queue(name, { connection: { url: redis.url }, prefix: DEFAULT_PREFIX })
  t.teardown(() => queue.close())
  return queue
}

async function enqueue (queueName: string, eventId: string): Promise<string> {
  const ingress = new Ingress(resolveIngressOptions({ redis: redis.url, secret: 'unused', queueName }))
  try {
    const { jobId } = await ingress.enqueue({ id: eventId, type: 'test.ping' }, { eventId })
    return jobId
  } finally {
    await ingress.close()
  }
}

/** Dead letters made the real way: events whose handler fails for good, on a worker in this process. */
async function deadLetters (t: Test, queueName: string, count: number): Promise<string[]> {
  for (let i = 0; i < count; i++) await enqueue(queueName, `evt_dead_${i}`)
  const worker = createWorker(() => { throw new UnrecoverableError('boom') }, { redis: redis.url, queueName, sweepIntervalMs: 0 })
  await worker.start()
  const dead = inspect(t, deadLetterQueueName(queueName))
  await eventually(async () => await dead.count() === count ? true : undefined)
  await worker.close()
  return (await dead.getJobs(['wait'], 0, -1, true)).map((job) => job.id as string)
}

t.test('--version prints the package version', async (t) => {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
  const result = await runCli(['--version'])
  t.equal(result.code, 0)
  t.equal(result.stdout.trim(), version)
})

t.test('bad configuration: exit 1, exactly one line on stderr, no stack trace, no secret', async (t) => {
  const secret = { WEBHOOK_SECRET: NEVER_PRINTED }
  const cases: Array<[string, string[], Record<string, string>, string | RegExp]> = [
    ['bad PORT', ['serve'], { ...secret, PORT: 'abc' },
      'anvil: invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")'],
    ['missing WEBHOOK_SECRET', ['serve'], {},
      'anvil: invalid configuration: WEBHOOK_SECRET is required: set it to the secret your webhook sender signs with'],
    ['bad REDIS_URL scheme, password not repeated', ['serve'], { ...secret, REDIS_URL: 'http://user:hunter2@example.com:6379' },
      'anvil: invalid configuration: REDIS_URL must be a redis:// or rediss:// URL (got "http://user:***@example.com:6379/")'],
    ['bad ANVIL_RETRY_SCHEDULE', ['serve'], { ...secret, ANVIL_RETRY_SCHEDULE: '1000,soon' },
      /^anvil: invalid configuration: ANVIL_RETRY_SCHEDULE must be comma-separated whole milliseconds .* \(got "1000,soon"\)$/],
    ['a flag overrides a valid env value and is named', ['serve', '--port', '70000'], { ...secret, PORT: '3000' },
      'anvil: invalid configuration: --port must be an integer from 0 to 65535 (got "70000")'],
    ['bad ANVIL_IDEMPOTENCY', ['dev'], { ...secret, ANVIL_IDEMPOTENCY: 'header:' },
      /^anvil: invalid configuration: ANVIL_IDEMPOTENCY must be signature, payload, header:<name> or body:<field> \(got "header:"\)$/],
    ['bad WORKER_CONCURRENCY', ['worker', '--handler', 'examples/handler.js'], { ...secret, WORKER_CONCURRENCY: '0' },
      'anvil: invalid configuration: WORKER_CONCURRENCY must be an integer from 1 to 10000 (got "0")'],
    ['worker without --handler', ['worker'], secret, "anvil: required option '--handler <path>' not specified"],
    ['replay with neither an id nor --all', ['replay'], secret, 'anvil: give either a dead-letter id or --all'],
    ['replay --limit that is not a number', ['replay', '--all', '--limit', 'ten'], secret,
      'anvil: invalid configuration: --limit must be an integer of at least 1 (got "ten")']
  ]
  await Promise.all(cases.map(async ([name, args, env, expected]) => {
    const result = await runCli(args, { env })
    t.equal(result.code, 1, `${name}: exit code`)
    const lines = result.stderr.split('\n').filter((line) => line !== '')
    t.equal(lines.length, 1, `${name}: one line on stderr`)
    if (typeof expected === 'string') t.equal(lines[0], expected, name)
    else t.match(lines[0], expected, name)
    t.equal(result.stdout, '', `${name}: nothing on stdout`)
    t.notMatch(result.stderr + result.stdout, /hunter2|whsec_never_print_me/, `${name}: no secret printed`)
  }))
})

/** The quickstart, verbatim: signed with openssl from $WEBHOOK_SECRET, sent with curl. */
const QUICKSTART = `body='{"id":"evt_1","type":"test.ping"}'; sig=$(printf '%s' "$body" | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -hex | sed 's/^.* //'); curl -i -X POST http://127.0.0.1:3000/webhooks -H 'content-type: application/json' -H "x-signature: sha256=$sig" --data "$body"`

/** The README's quickstart block, less installing and starting the server (the test starts its own). */
function readmeQuickstart (): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string)
    .find((text) => text.includes('openssl dgst'))
  if (block === undefined) throw new Error('README.md has no sh block with the openssl quickstart')
  return block.split('\n').filter((line) => !/^(npm |#)|anvil(\.js)? serve/.test(line.trim())).join('\n')
}

t.test('serve: the quickstart works verbatim; a repeat is replayed with the same jobId', async (t) => {
  const port = await freePort()
  const cli = startCli(t, ['serve', '--port', String(port)], {
    // --port wins over PORT, which points nowhere useful.
    env: { REDIS_URL: redis.url, WEBHOOK_SECRET: 'whsec_dev', HOST: '127.0.0.1', PORT: '1', ANVIL_QUEUE: 'cli-quickstart' }
  })
  await cli.log('anvil serve: listening', { port })
  const here = (script: string): string => script.replaceAll('http://127.0.0.1:3000', `http://127.0.0.1:${port}`)
  const userEnv = { WEBHOOK_SECRET: 'whsec_dev' }

  // The signing step alone, through a real shell and the real openssl; the request through fetch.
  const body = '{"id":"evt_1","type":"test.ping"}'
  const sig = (await shell(`body='${body}'; printf '%s' "$body" | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -hex | sed 's/^.* //'`, userEnv)).trim()
  t.match(sig, /^[0-9a-f]{64}$/)
  const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': `sha256=${sig}` }, body
  })
  t.equal(response.status, 202)
  const accepted = await response.json() as { jobId: string }
  t.match(accepted, { jobId: /^e_/, replayed: false })

  if (HAS_CURL) {
    t.same(curlResponse(await shell(here(QUICKSTART), userEnv)), { status: 202, body: { jobId: accepted.jobId, replayed: true } },
      'the one-line quickstart, run as is')
    t.same(curlResponse(await shell(here(readmeQuickstart()), userEnv)), { status: 202, body: { jobId: accepted.jobId, replayed: true } },
      "the README's quickstart, run as is")
  } else {
    t.comment('curl is not on PATH: the quickstart ran with fetch only')
  }
  t.equal(await inspect(t, 'cli-quickstart').count(), 1, 'one job in Redis')

  t.equal(await cli.stop('SIGTERM'), 0, 'SIGTERM exits 0')
  t.ok(cli.lines.filter((line) => line !== '').every((line) => parseJson(line) !== undefined), 'stdout is JSON lines')
  t.ok(cli.lines.some((line) => parseJson(line)?.msg === 'anvil: shutting down'), 'closed gracefully')
  t.notMatch(cli.output, /whsec_dev/, 'the secret is not logged')
  t.notMatch(cli.output, new RegExp(sig), 'the signature is not logged')
})

t.test('serve honours LOG_LEVEL and exits 0 on SIGTERM', async (t) => {
  const port = await freePort()
  const cli = startCli(t, ['serve'], {
    env: { REDIS_URL: redis.url, WEBHOOK_SECRET: NEVER_PRINTED, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' }
  })
  // Nothing is logged at warn, so readiness is the port answering (401: unsigned).
  const status = await eventually(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', body: '{}' })).status } catch { return undefined }
  })
  t.equal(status, 401)
  t.equal(await cli.stop('SIGTERM'), 0)
  t.equal(cli.output, '', 'no info lines at LOG_LEVEL=warn')
})

t.test('worker runs the example handler (default export, path relative to cwd); SIGTERM exits 0', async (t) => {
  const queueName = 'cli-example'
  const cli = startCli(t, ['worker', '--handler', 'examples/handler.js'], {
    cwd: ROOT, env: { REDIS_URL: redis.url, ANVIL_QUEUE: queueName }
  })
  await cli.log('anvil worker: started')
  const jobId = await enqueue(queueName, 'evt_example')
  const handled = parseJson(await cli.line((line) => parseJson(line)?.handled === jobId))
  t.match(handled, { eventId: 'evt_example', type: 'test.ping', attempt: 1 })
  const queue = inspect(t, queueName)
  t.equal(await eventually(async () => await queue.getJobState(jobId) === 'completed' ? 'completed' : undefined), 'completed')
  t.equal(await cli.stop('SIGTERM'), 0)
})

t.test('worker loads a CommonJS module with a named `handler` export and processes a job end to end', async (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'handled.jsonl')
  writeFileSync(join(dir, 'hooks.cjs'), `
    const { appendFileSync } = require('node:fs')
    exports.handler = async (event) => {
      appendFileSync(process.env.HANDLER_OUT, JSON.stringify({ id: event.id, body: event.json() }) + '\\n')
    }`)
  const queueName = 'cli-cjs'
  const cli = startCli(t, ['worker', '--handler', './hooks.cjs', '--queue', queueName], {
    cwd: dir, env: { REDIS_URL: redis.url, HANDLER_OUT: out }
  })
  await cli.log('anvil worker: started')
  const jobId = await enqueue(queueName, 'evt_cjs')
  const written = await eventually(() => existsSync(out) ? readFileSync(out, 'utf8') : undefined)
  t.same(JSON.parse(written), { id: jobId, body: { id: 'evt_cjs', type: 'test.ping' } })
  t.equal(await cli.stop('SIGTERM'), 0)
})

t.test('worker --handler with neither a default nor a `handler` function: exit 1, one clear line', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'nothing.mjs'), 'export const answer = 42\n')
  const result = await runCli(['worker', '--handler', 'nothing.mjs'], { cwd: dir, env: { REDIS_URL: redis.url } })
  t.equal(result.code, 1)
  t.equal(result.stderr, 'anvil: invalid configuration: --handler nothing.mjs exports no handler: ' +
    'export a default function or a function named "handler"\n')
})

t.test('worker on SIGTERM lets an active job finish, then exits 0', async (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'progress.txt')
  writeFileSync(join(dir, 'slow.mjs'), `
    import { appendFileSync } from 'node:fs'
    import { setTimeout as sleep } from 'node:timers/promises'
    export async function handler () {
      appendFileSync(process.env.HANDLER_OUT, 'started\\n')
      await sleep(1000)
      appendFileSync(process.env.HANDLER_OUT, 'done\\n')
    }`)
  const queueName = 'cli-graceful'
  const cli = startCli(t, ['worker', '--handler', 'slow.mjs'], {
    cwd: dir, env: { REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HANDLER_OUT: out }
  })
  await cli.log('anvil worker: started')
  const jobId = await enqueue(queueName, 'evt_slow')
  await eventually(() => existsSync(out) ? true : undefined)
  t.equal(await cli.stop('SIGTERM'), 0)
  t.equal(readFileSync(out, 'utf8'), 'started\ndone\n', 'the job ran to its end before the exit')
  t.equal(await inspect(t, queueName).getJobState(jobId), 'completed')
})

t.test('worker on SIGTERM forces after ANVIL_SHUTDOWN_TIMEOUT_MS when a job hangs, and exits 0', async (t) => {
  const dir = tempDir(t)
  const out = join(dir, 'progress.txt')
  writeFileSync(join(dir, 'stuck.mjs'), `
    import { appendFileSync } from 'node:fs'
    export default async function () {
      appendFileSync(process.env.HANDLER_OUT, 'started\\n')
      await new Promise(() => {})
    }`)
  const queueName = 'cli-forced'
  const cli = startCli(t, ['worker', '--handler', 'stuck.mjs'], {
    cwd: dir, env: { REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HANDLER_OUT: out, ANVIL_SHUTDOWN_TIMEOUT_MS: '200' }
  })
  await cli.log('anvil worker: started')
  const jobId = await enqueue(queueName, 'evt_stuck')
  await eventually(() => existsSync(out) ? true : undefined)
  t.equal(await cli.stop('SIGTERM'), 0)
  t.ok(cli.lines.some((line) => /shutdown timeout, forcing/.test(String(parseJson(line)?.msg))), 'logged the forced close')
  t.equal(await inspect(t, queueName).getJobState(jobId), 'active', 'the job is left to stall recovery')
})

t.test('replay <id> replays one dead letter; again is a no-op; an unknown id exits 1', async (t) => {
  const queueName = 'cli-replay-one'
  const [id] = await deadLetters(t, queueName, 1) as [string]
  const env = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName }
  const first = await runCli(['replay', id], { env })
  t.equal(first.code, 0, first.stderr)
  t.same(JSON.parse(first.stdout), { deadLetterId: id, jobId: `r_${id}`, replayedNow: true })
  t.equal(await inspect(t, queueName).getJobState(`r_${id}`), 'waiting', 'the replay is queued')
  const again = await runCli(['replay', id], { env })
  t.same(JSON.parse(again.stdout), { deadLetterId: id, jobId: `r_${id}`, replayedNow: false })
  const unknown = await runCli(['replay', 'd_nope'], { env })
  t.equal(unknown.code, 1)
  t.equal(unknown.stderr, 'anvil: no dead letter with id d_nope\n')
  t.equal(unknown.stdout, '')
})

t.test('replay --all --limit N replays at most N, oldest first; --all replays the rest', async (t) => {
  const queueName = 'cli-replay-all'
  const ids = await deadLetters(t, queueName, 3)
  const env = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName }
  const limited = await runCli(['replay', '--all', '--limit', '2'], { env })
  t.equal(limited.code, 0, limited.stderr)
  const firstTwo = limited.stdout.split('\n').map((line) => JSON.parse(line) as { deadLetterId: string, replayedNow: boolean })
  t.same(firstTwo.map((r) => r.deadLetterId), ids.slice(0, 2))
  t.ok(firstTwo.every((r) => r.replayedNow))
  const rest = await runCli(['replay', '--all'], { env })
  t.equal(rest.code, 0, rest.stderr)
  t.same(JSON.parse(rest.stdout), { deadLetterId: ids[2], jobId: `r_${ids[2] as string}`, replayedNow: true })
  const none = await runCli(['replay', '--all'], { env })
  t.same([none.code, none.stdout], [0, ''], 'nothing left to replay')
})

function isRunning (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

t.test('dev starts a private redis-server when none answers, prints working curls, logs events, stops Redis on exit', async (t) => {
  const cwd = tempDir(t)
  const probePort = await freePort()
  const port = await freePort()
  const cli = startCli(t, ['dev'], {
    cwd, env: { ANVIL_DEV_REDIS_PROBE_URL: `redis://127.0.0.1:${probePort}`, PORT: String(port), ANVIL_QUEUE: 'cli-dev' }
  })
  const started = await cli.log('anvil dev: started redis-server')
  const redisPid = started.redisPid as number
  t.teardown(() => { if (isRunning(redisPid)) process.kill(redisPid, 'SIGKILL') })
  t.equal(started.url, `redis://127.0.0.1:${probePort}`, 'on the probed port, where nothing listened')
  t.ok(isRunning(redisPid), 'redis-server runs')
  await cli.log('anvil dev: listening', { host: '127.0.0.1', port })

  // The pasteable curl, exactly as printed.
  const signedCurl = (await cli.line((line) => line.startsWith('  curl '))).trim()
  t.match(signedCurl, `http://127.0.0.1:${port}/webhooks`)
  const first = await sendPrinted(signedCurl)
  t.equal(first.status, 202)
  t.match(first.body, { jobId: /^e_/, replayed: false })
  await cli.log('anvil dev: event', { eventId: 'evt_1', eventType: 'test.ping', bytes: 33 })

  // The openssl variant, with the export line printed for the dev secret: same bytes, same signature.
  const exportLine = (await cli.line((line) => line.startsWith('  export WEBHOOK_SECRET='))).trim()
  t.equal(exportLine, 'export WEBHOOK_SECRET=whsec_dev')
  const opensslCurl = (await cli.line((line) => line.startsWith('  body='))).trim()
  if (HAS_CURL) {
    const again = curlResponse(await shell(`${exportLine}; ${opensslCurl}`))
    t.same(again, { status: 202, body: { jobId: (first.body as { jobId: string }).jobId, replayed: true } })
  } else {
    t.comment('curl is not on PATH: the openssl variant was not run')
  }

  t.equal(await cli.stop('SIGTERM'), 0)
  t.notOk(isRunning(redisPid), 'redis-server is gone')
  t.ok(existsSync(join(cwd, '.anvil', 'appendonlydir')), 'its data is under ./.anvil with an append-only file')
})

t.test('dev uses a Redis that answers the probe, never shows a secret it was given, and exits 0 on SIGINT', async (t) => {
  const port = await freePort()
  const secret = 'whsec_user_given_secret'
  const cli = startCli(t, ['dev', '--port', String(port)], {
    cwd: tempDir(t), env: { ANVIL_DEV_REDIS_PROBE_URL: redis.url, WEBHOOK_SECRET: secret, ANVIL_QUEUE: 'cli-dev-existing' }
  })
  t.equal((await cli.log('anvil dev: using the Redis that is running')).url, redis.url)
  await cli.log('anvil dev: listening', { port })
  const signedCurl = (await cli.line((line) => line.startsWith('  curl '))).trim()
  t.equal((await sendPrinted(signedCurl)).status, 202, 'the printed curl is signed with the given secret')
  t.equal(await cli.stop('SIGINT'), 0)
  t.notOk(cli.lines.some((line) => parseJson(line)?.msg === 'anvil dev: started redis-server'))
  t.notMatch(cli.output, secret)
  t.notMatch(cli.output, 'export WEBHOOK_SECRET')
})

t.test('dev with REDIS_URL set uses it and neither probes nor starts a redis-server', async (t) => {
  const port = await freePort()
  const cli = startCli(t, ['dev', '--port', String(port)], {
    cwd: tempDir(t),
    // Were the probe consulted, it would find nothing here and start a redis-server.
    env: { REDIS_URL: redis.url, ANVIL_DEV_REDIS_PROBE_URL: `redis://127.0.0.1:${await freePort()}`, ANVIL_QUEUE: 'cli-dev-url' }
  })
  await cli.log('anvil dev: listening', { port })
  t.equal((await sendPrinted((await cli.line((line) => line.startsWith('  curl '))).trim())).status, 202)
  t.equal(await cli.stop('SIGTERM'), 0)
  t.notOk(cli.lines.some((line) => /redis-server|Redis that is running/.test(String(parseJson(line)?.msg))))
  const queue = inspect(t, 'cli-dev-url')
  t.equal(await queue.getJobCountByTypes('wait', 'active', 'completed'), 1, 'the event went to REDIS_URL')
})

t.test('dev without redis-server on PATH: exit 1 and one line on how to get Redis', async (t) => {
  // node's own directory may hold redis-server too (/usr/bin), so PATH is a directory with only node in it.
  const bin = tempDir(t)
  symlinkSync(process.execPath, join(bin, 'node'))
  const probePort = await freePort()
  const result = await runCli(['dev'], {
    node: join(bin, 'node'), cwd: tempDir(t), env: { PATH: bin, ANVIL_DEV_REDIS_PROBE_URL: `redis://127.0.0.1:${probePort}` }
  })
  t.equal(result.code, 1)
  t.equal(result.stderr, `anvil: no Redis: nothing answers at redis://127.0.0.1:${probePort} and redis-server is not on PATH; ` +
    'install Redis (apt-get install redis-server, or brew install redis) or set REDIS_URL\n')
})

t.test('dev Redis launcher: a non-Redis server on the probed port means a free port; stop() ends redis-server', async (t) => {
  const impostor = createServer((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'))
  const port = await freePort()
  await new Promise<void>((resolve) => impostor.listen(port, '127.0.0.1', resolve))
  t.teardown(() => impostor.close())
  const probeUrl = `redis://127.0.0.1:${port}`
  t.equal(await probeRedis(probeUrl), 'other')
  const found = await ensureDevRedis({ probeUrl, dir: join(tempDir(t), '.anvil') })
  const started = found.started
  if (started === undefined) throw new Error('expected a private redis-server')
  t.teardown(() => started.stop())
  t.not(started.port, port, 'another port')
  t.equal(found.url, started.url)
  t.equal(await probeRedis(started.url), 'redis')
  await started.stop()
  t.notOk(isRunning(started.pid))
  t.equal(await probeRedis(started.url), 'refused')
})

t.test('the printed commands: the openssl one is the quickstart, verbatim; the signed one holds the HMAC only', async (t) => {
  t.equal(opensslCurl('http://127.0.0.1:3000/webhooks'), QUICKSTART)
  const signed = signedCurl('http://127.0.0.1:3000/webhooks', NEVER_PRINTED)
  t.match(signed, /-H 'x-signature: sha256=[0-9a-f]{64}'/)
  t.notMatch(signed, NEVER_PRINTED)
  t.equal(localUrl('0.0.0.0', 3000, '/webhooks'), 'http://127.0.0.1:3000/webhooks', 'a wildcard address becomes loopback')
  t.equal(localUrl('::', 8080, '/h'), 'http://[::1]:8080/h')
  t.equal(localUrl('10.0.0.5', 80, '/h'), 'http://10.0.0.5:80/h')
})

t.test('the logger redacts secrets and signature headers', async (t) => {
  const written: string[] = []
  const log = createLogger('info', { write: (line: string) => { written.push(line) } })
  log.info({ secret: NEVER_PRINTED, options: { secrets: [NEVER_PRINTED] }, req: { headers: { 'x-signature': 'sha256=abc', authorization: 'Bearer t' } } }, 'x')
  const entry = JSON.parse(written.join('')) as { req: { headers: Record<string, string> } }
  t.notMatch(written.join(''), NEVER_PRINTED)
  t.same(entry.req.headers, { 'x-signature': '[redacted]', authorization: '[redacted]' })
})
