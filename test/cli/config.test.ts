/**
 * `anvil --version`, `--help`, and configuration errors worded for the user: one line, exit 1, no secret: through
 * the CLI as users run it once per way out, and each value's line through the same program and error line in this
 * process (test/helpers/program.ts). And what the CLI prints: the quickstart commands and redacted log lines.
 * Helpers: test/helpers/cli.ts.
 */
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createLogger } from '../../cli/logging.js'
import { localUrl, opensslCurl, signedCurl } from '../../cli/quickstart.js'
import { NEVER_PRINTED, QUICKSTART, ROOT, runCli } from '../helpers/cli.js'
import { refusal } from '../helpers/program.js'

t.test('--version prints the package version', async (t) => {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
  const result = await runCli(['--version'])
  t.equal(result.code, 0)
  t.equal(result.stdout.trim(), version)
})

/** A process per run: exit 1, exactly one line on stderr, nothing on stdout, no secret. */
async function refusedByCli (t: Test, args: string[], env: Record<string, string>, expected: string): Promise<void> {
  const result = await runCli(args, { env })
  t.equal(result.code, 1, `${args.join(' ')}: exit code`)
  t.equal(result.stderr, expected + '\n', `${args.join(' ')}: exactly this one line, no stack trace`)
  t.equal(result.stdout, '', 'nothing on stdout')
  t.notMatch(result.stderr + result.stdout, /hunter2|whsec_never_print_me/, 'no secret printed')
}

const SECRET = { WEBHOOK_SECRET: NEVER_PRINTED }

t.test('bad configuration through the CLI: exit 1, exactly one line on stderr, no stack trace, no secret', async (t) => {
  // A process per way out: a loader's error (serve, worker) and commander's own (replay). The wording of each
  // value's line is the next test's, in this process, through the same program and line.
  await Promise.all([
    refusedByCli(t, ['serve'], { ...SECRET, REDIS_URL: 'http://user:hunter2@example.com:6379' },
      'anvil: invalid configuration: REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "http://user:***@example.com:6379/")'),
    refusedByCli(t, ['serve'], { WEBHOOK_SECRET: 'hunter2' },
      'anvil: invalid configuration: WEBHOOK_SECRET is shorter than 16 bytes: use a random one (e.g. `openssl rand -hex 32`), or ANVIL_ALLOW_SHORT_SECRETS=true for development'),
    refusedByCli(t, ['worker'], SECRET,
      'anvil: invalid configuration: anvil worker needs --handler, a sources file (ANVIL_CONFIG) whose sources forward, or ANVIL_DATABASE_URL (outgoing webhooks)'),
    refusedByCli(t, ['replay'], SECRET, 'anvil: give a dead-letter id, --all, or --filter')
  ])
})

t.test('bad configuration: the one line each command prints, naming the value, never a secret', async (t) => {
  const cases: Array<[string, string[], Record<string, string>, string | RegExp]> = [
    ['bad PORT', ['serve'], { ...SECRET, PORT: 'abc' },
      'anvil: invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")'],
    ['missing WEBHOOK_SECRET', ['serve'], {},
      'anvil: invalid configuration: WEBHOOK_SECRET is required: set it to the secret your webhook sender signs with'],
    ['bad ANVIL_RETRY_SCHEDULE', ['serve'], { ...SECRET, ANVIL_RETRY_SCHEDULE: '1000,soon' },
      /^anvil: invalid configuration: ANVIL_RETRY_SCHEDULE must be comma-separated whole milliseconds .* \(got "1000,soon"\)$/],
    ['a flag overrides a valid env value and is named', ['serve', '--port', '70000'], { ...SECRET, PORT: '3000' },
      'anvil: invalid configuration: --port must be an integer from 0 to 65535 (got "70000")'],
    ['bad ANVIL_IDEMPOTENCY', ['dev'], { ...SECRET, ANVIL_IDEMPOTENCY: 'header:' },
      /^anvil: invalid configuration: ANVIL_IDEMPOTENCY must be signature, payload, header:<name> or body:<field> \(got "header:"\)$/],
    ['bad WORKER_CONCURRENCY', ['worker', '--handler', 'examples/handler.js'], { ...SECRET, WORKER_CONCURRENCY: '0' },
      'anvil: invalid configuration: WORKER_CONCURRENCY must be an integer from 1 to 10000 (got "0")'],
    ['bad ANVIL_METRICS_PATH', ['serve'], { ...SECRET, ANVIL_METRICS_PATH: 'metrics' },
      'anvil: invalid configuration: ANVIL_METRICS_PATH must be a URL path starting with "/", or "off" (got "metrics")'],
    ['bad --metrics-port', ['worker', '--handler', 'examples/handler.js', '--metrics-port', '-1'], SECRET,
      'anvil: invalid configuration: --metrics-port must be an integer from 0 to 65535 (got "-1")'],
    ['bad ANVIL_LOG_PAYLOADS', ['dev'], { ...SECRET, ANVIL_LOG_PAYLOADS: 'yes' },
      'anvil: invalid configuration: ANVIL_LOG_PAYLOADS must be true or false (got "yes")'],
    ['bad ANVIL_RETENTION_COMPLETED_COUNT', ['serve'], { ...SECRET, ANVIL_RETENTION_COMPLETED_COUNT: 'all' },
      'anvil: invalid configuration: ANVIL_RETENTION_COMPLETED_COUNT must be a whole number of jobs, at least 0 (got "all")'],
    ['worker: dead letters that would not outlive failed jobs', ['worker', '--handler', 'examples/handler.js', '--retention-dead-age-seconds', '30'],
      { ...SECRET, ANVIL_RETENTION_FAILED_AGE_SECONDS: '60' },
      'anvil: invalid configuration: --retention-dead-age-seconds must be 0 or more than ANVIL_RETENTION_FAILED_AGE_SECONDS (60 s), so dead letters outlive failed jobs (got "30")'],
    ['replay --limit that is not a number', ['replay', '--all', '--limit', 'ten'], SECRET,
      'anvil: invalid configuration: --limit must be an integer of at least 1 (got "ten")'],
    ['a password in a mistyped REDIS_URL', ['serve'], { ...SECRET, REDIS_URL: 'redis:/:hunter2@127.0.0.1:6379' },
      'anvil: invalid configuration: REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "redis:/***@127.0.0.1:6379")'],
    ['a password in a REDIS_URL with a bad database', ['serve'], { ...SECRET, REDIS_URL: 'redis://hunter2@127.0.0.1:6379/abc' },
      'anvil: invalid configuration: REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "redis://***@127.0.0.1:6379/abc")']
  ]
  for (const [name, args, env, expected] of cases) {
    const { code, stdout, stderr } = await refusal(args, env)
    t.equal(code, 1, `${name}: exit code`)
    t.equal(stdout, '', `${name}: nothing on stdout`)
    const lines = stderr.split('\n').filter((line) => line !== '')
    t.equal(lines.length, 1, `${name}: one line`)
    if (typeof expected === 'string') t.equal(lines[0], expected, name)
    else t.match(lines[0], expected, name)
    t.notMatch(stdout + stderr, /hunter2|whsec_never_print_me/, `${name}: no secret`)
  }
})

t.test('--help shows each flag with its default and its variable, from the one settings table', async (t) => {
  const { SETTINGS } = await import('../../cli/config/settings.js')
  const { createProgram } = await import('../../cli/program.js')
  /** One line per option: wrapped descriptions joined, the column padding collapsed. */
  const flat = (help: string): string => help.replace(/\n\s+(?=[^\s-])/g, ' ').replace(/ {2,}/g, ' ')
  const serve = await runCli(['serve', '--help'])
  t.equal(serve.code, 0)
  const lines = flat(serve.stdout)
  for (const setting of Object.values(SETTINGS)) {
    if (!lines.includes(setting.flag + ' ')) continue
    const line = lines.split('\n').find((l) => l.trimStart().startsWith(setting.flag + ' ')) ?? ''
    if (setting.env !== undefined) t.match(line, `env: ${setting.env})`, `${setting.flag} names ${setting.env}`)
    if (setting.default !== undefined) t.match(line, `(default: ${setting.defaultShown ?? setting.default}`, `${setting.flag} shows its default`)
  }
  t.match(lines, '--port <port> port to listen on (default: 3000, env: PORT)')
  t.match(lines, '--body-limit <bytes> largest accepted body (default: 1048576 (1 MiB), env: ANVIL_BODY_LIMIT)')
  // The other commands' help is the same program's, in this process: --help prints what helpInformation() gives.
  const help = (name: string): string => flat(createProgram('0.0.0').commands.find((c) => c.name() === name)?.helpInformation() ?? '').trimEnd()
  t.equal(help('serve'), lines.trimEnd(), 'helpInformation() is what --help prints')
  t.match(help('dev'), '(default: 127.0.0.1, env: HOST)', 'dev listens on loopback by default')
  t.match(help('worker'), '--log-payloads <bool>', 'the worker logs payloads on request too')
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
t.test('payloads are redacted from log lines unless ANVIL_LOG_PAYLOADS=true; repeated warnings are throttled', async (t) => {
  const { throttleRepeats } = await import('../../cli/logging.js')
  const lines = (logPayloads: boolean): Array<Record<string, unknown>> => {
    const written: string[] = []
    createLogger('info', { destination: { write: (line: string) => { written.push(line) } }, logPayloads })
      .info({ event: { payload: 'card 4242', id: 'e1' }, body: 'raw' }, 'x')
    return written.map((line) => JSON.parse(line) as Record<string, unknown>)
  }
  t.match(lines(false)[0], { event: { payload: '[redacted]', id: 'e1' }, body: '[redacted]' })
  t.match(lines(true)[0], { event: { payload: 'card 4242' }, body: 'raw' })

  const seen: Array<[object, string | undefined]> = []
  const sink = { info: () => {}, warn: (obj: object, msg?: string) => { seen.push([obj, msg]) }, error: () => {} }
  const throttled = throttleRepeats(sink, 60_000)
  for (let i = 0; i < 5; i++) throttled.warn({ err: 'ECONNREFUSED' }, 'anvil worker: Redis error')
  throttled.warn({ err: 'other' }, 'anvil worker: Redis error')
  t.same(seen, [[{ err: 'ECONNREFUSED' }, 'anvil worker: Redis error'], [{ err: 'other' }, 'anvil worker: Redis error']])

  // Per-job lines are never dropped: many jobs failing with one error each leave their line, repeats included.
  seen.length = 0
  for (const jobId of ['e_1', 'e_2', 'e_3', 'e_3']) throttled.warn({ jobId, err: 'boom' }, 'anvil worker: attempt failed')
  t.same(seen.map(([obj]) => (obj as { jobId: string }).jobId), ['e_1', 'e_2', 'e_3', 'e_3'])

  // Thousands of different errors within one window: memory stays bounded by forgetting the oldest, so the
  // very first one, forgotten, is written again; the latest, remembered, is not.
  seen.length = 0
  for (let i = 0; i < 5000; i++) throttled.warn({ err: `error ${i}` }, 'anvil worker: Redis error')
  t.equal(seen.length, 5000, 'each distinct error once')
  throttled.warn({ err: 'error 0' }, 'anvil worker: Redis error')
  throttled.warn({ err: 'error 4999' }, 'anvil worker: Redis error')
  t.same(seen.slice(5000).map(([obj]) => (obj as { err: string }).err), ['error 0'])
})

t.test('request loggers: every line a request writes carries its id, and the level (also per route) holds', async (t) => {
  const { createApp } = await import('../../cli/server.js')
  const linesAt = async (level: 'info' | 'warn'): Promise<Array<Record<string, unknown>>> => {
    const written: string[] = []
    const app = createApp(createLogger(level, { write: (line: string) => { written.push(line) } }))
    app.get('/a', async (request) => {
      request.log.info('info line')
      request.log.warn({ n: 1 }, 'warn line')
      request.log.child({ part: 'inner' }).error('child line')
      const log = request.log as unknown as { isLevelEnabled: (level: string) => boolean }
      return { debug: log.isLevelEnabled('debug'), warn: log.isLevelEnabled('warn') }
    })
    app.get('/quiet', { logLevel: 'error' }, async (request) => {
      request.log.warn('route says error only')
      return {}
    })
    const answer = await app.inject({ url: '/a', headers: { 'x-request-id': 'req-1' } })
    t.same(answer.json(), { debug: false, warn: true })
    await app.inject({ url: '/quiet', headers: { 'x-request-id': 'req-2' } })
    await app.close()
    return written.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.requestId !== undefined)
  }
  const atWarn = await linesAt('warn')
  t.same(atWarn.map((line) => [line.msg, line.requestId]), [['warn line', 'req-1'], ['child line', 'req-1']])
  t.match(atWarn[0], { n: 1, level: 40 })
  t.match(atWarn[1], { part: 'inner', level: 50 })
  const atInfo = await linesAt('info')
  t.same(atInfo.filter((line) => line.requestId === 'req-1').map((line) => line.msg),
    ['incoming request', 'info line', 'warn line', 'child line', 'request completed'])
  t.notOk(atInfo.some((line) => line.requestId === 'req-2'), 'the quiet route writes nothing below error')
})
