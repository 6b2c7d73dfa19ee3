import t from 'tap'
import { spawn } from '../helpers/children.js'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import Stripe from 'stripe'
import anvil from '../../index.js'
import { createLogger } from '../../cli/logging.js'
import { loadDevConfig, loadServeConfig } from '../../cli/config/load-config.js'
import type { WebhookEvent } from '../../src/worker/webhook-event.js'
import { PROVIDER_NAMES, SIGNATURE_HEADERS } from '../../src/providers/presets.js'
import { parseSourcesFile } from '../../cli/config/sources-file.js'
import { createWorker } from '../../src/worker/worker.js'
import { SECRET, signed } from '../helpers/app.js'
import { sourceApp } from '../helpers/providers.js'
import { inspectQueue } from '../helpers/queue.js'
import { ROOT } from '../helpers/root.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const stripe = new Stripe('sk_test_anvil')
const STRIPE_SECRET = 'whsec_sources_0123'
const GITHUB_SECRET = 'gh_sources_0123456'
const SENDGRID_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64')
const stripeHeaders = (body: string): Record<string, string> => ({
  'content-type': 'application/json',
  'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET })
})

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const dir = mkdtempSync(join(tmpdir(), 'anvil-sources-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('one plugin, several sources: each path verifies its own provider; keys never cross sources', async (t) => {
  const app = await sourceApp(redis.url, 'multi', [
    { path: '/hooks/stripe', provider: 'stripe', secrets: [STRIPE_SECRET] },
    { path: '/hooks/github', provider: 'github', secrets: [GITHUB_SECRET] },
    { path: '/hooks/own', secrets: [SECRET] }
  ])
  t.teardown(() => app.close())
  const body = '{"id":"evt_shared","type":"charge.succeeded"}'
  const toStripe = await app.inject({ method: 'POST', url: '/hooks/stripe', headers: stripeHeaders(body), payload: body })
  t.equal(toStripe.statusCode, 202)
  const toOwn = await app.inject(signed(body, {}, '/hooks/own'))
  t.equal(toOwn.statusCode, 202)
  t.not(toOwn.json().jobId, toStripe.json().jobId, 'the same bytes on two sources are two events')
  const crossed = await app.inject({ method: 'POST', url: '/hooks/github', headers: stripeHeaders(body), payload: body })
  t.equal(crossed.statusCode, 401, 'a Stripe signature means nothing on the GitHub path')
  t.equal(crossed.json().code, 'ANVIL_ERR_SIGNATURE_MISSING')
})

t.test('the handler gets the provider and the event type, so it can branch on stripe / charge.succeeded', async (t) => {
  const app = await sourceApp(redis.url, 'branch', [{ path: '/stripe', provider: 'stripe', secrets: [STRIPE_SECRET] }])
  const seen: WebhookEvent[] = []
  const worker = createWorker((event) => { seen.push(event) }, { redis: redis.url, queueName: 'branch', sweepIntervalMs: 0 })
  t.teardown(async () => { await worker.close(); await app.close() })
  const body = '{"id":"evt_branch","type":"charge.succeeded"}'
  t.equal((await app.inject({ method: 'POST', url: '/stripe', headers: stripeHeaders(body), payload: body })).statusCode, 202)
  await worker.start()
  await eventually('the event handled', () => seen.length > 0)
  t.match(seen[0], { provider: 'stripe', eventType: 'charge.succeeded', eventId: 'evt_branch', source: 'stripe' })
})

t.test('bad sources fail registration with one line', async (t) => {
  const cases: Array<[object, RegExp]> = [
    [{ sources: [{ path: '/a', provider: 'mailchimp', secrets: ['x'] }] }, /sources\.0\.provider/],
    [{ sources: [{ path: '/a', provider: 'stripe', secrets: [] }] }, /sources\.0\.secrets/],
    [{ sources: [{ path: '/a', provider: 'stripe', secrets: ['x'], tolerance: -1 }] }, /sources\.0\.tolerance/],
    [{ sources: [{ path: '/a', provider: 'stripe', secrets: ['x'] }, { path: '/b', provider: 'stripe', secrets: ['y'] }] }, /share the name "stripe"/],
    [{ sources: [{ path: '/a', provider: 'stripe', secrets: ['x'] }, { path: '/a', provider: 'github', secrets: ['y'] }] }, /share the path "\/a"/],
    [{ secret: 'x', sources: [{ path: '/a', provider: 'stripe', secrets: ['x'] }] }, /sources replaces secret/],
    [{ sources: [{ path: '/a', provider: 'discord', secrets: ['not-a-key'] }] }, /discord public keys/],
    [{ sources: [{ path: '/a', provider: 'sendgrid', secrets: ['bm90IGEga2V5'] }] }, /sendgrid verification keys/],
    [{ sources: [{ path: '/a', provider: 'sendgrid', secrets: [SENDGRID_KEY], idempotency: { header: 'x-request-id' } }] }, /sources\.0\.idempotency: a sendgrid body is a batch/]
  ]
  for (const [options, pattern] of cases) {
    const app = Fastify()
    const err = await app.register(anvil, { redis: redis.url, connectTimeoutMs: 1, ...options }).ready().then(() => undefined, (e: Error) => e)
    await app.close()
    t.match(err, { code: 'ANVIL_ERR_INVALID_OPTIONS', message: pattern }, JSON.stringify(options))
    t.notOk(err?.message.includes('\n'), 'one line')
  }
})

t.test('a sources file is JSON or YAML; ${NAME} secrets come from the environment and are never quoted back', async (t) => {
  const json = JSON.stringify({ sources: [{ path: '/stripe', provider: 'stripe', secrets: ['${STRIPE_WHSEC}'], tolerance: 600 }] })
  t.same(parseSourcesFile(json, 'a.json', { STRIPE_WHSEC: 'whsec_env_0123456789' }), [{ path: '/stripe', provider: 'stripe', secrets: ['whsec_env_0123456789'], tolerance: 600 }])
  const yaml = [
    'sources:',
    '  - path: /github',
    '    provider: github',
    '    secrets: [gh_old_0123456789, gh_new_0123456789]',
    '  - path: /twilio',
    '    provider: twilio',
    '    secrets: [tw_0123456789abcdef]',
    '    publicUrl: https://hooks.example/twilio',
    '    idempotency: { header: x-request-id }'
  ].join('\n')
  t.match(parseSourcesFile(yaml, 'b.yaml'), [
    { path: '/github', provider: 'github', secrets: ['gh_old_0123456789', 'gh_new_0123456789'] },
    { path: '/twilio', publicUrl: 'https://hooks.example/twilio', idempotency: { header: 'x-request-id' } }
  ])
  t.throws(() => parseSourcesFile(json, 'a.json', {}), { code: 'ANVIL_ERR_INVALID_CONFIG', message: /a\.json: sources\.0\.secrets\.0 names \$\{STRIPE_WHSEC\}, which is not set/ })
  const bad = JSON.stringify({ sources: [{ path: '/x', provider: 'stripe', secrets: ['whsec_topsecret'], extra: 1 }] })
  const err = t.throws(() => parseSourcesFile(bad, 'c.json')) as Error
  t.match(err, { code: 'ANVIL_ERR_INVALID_CONFIG', message: /c\.json: sources\.0/ })
  t.notOk(err.message.includes('whsec_topsecret'), 'the secret is not in the message')
  t.throws(() => parseSourcesFile('{ sources: [', 'd.yaml'), { message: /d\.yaml is neither JSON nor YAML/ })
})

t.test('ANVIL_CONFIG / --config: the CLI reads the file; WEBHOOK_SECRET is then optional; --path conflicts', async (t) => {
  const file = join(dir, 'sources.yaml')
  writeFileSync(file, 'sources:\n  - { path: /stripe, provider: stripe, secrets: ["${STRIPE_WHSEC}"] }\n')
  const config = loadServeConfig({ ANVIL_CONFIG: file, STRIPE_WHSEC: 'whsec_x_0123456789' })
  t.same(config.sources, [{ path: '/stripe', provider: 'stripe', secrets: ['whsec_x_0123456789'] }])
  t.same(loadServeConfig({ STRIPE_WHSEC: 'whsec_x_0123456789' }, { config: file }).sources, config.sources)
  t.throws(() => loadServeConfig({ ANVIL_CONFIG: file, STRIPE_WHSEC: 'x', ANVIL_PATH: '/w' }), { message: /ANVIL_PATH does not go with a sources file/ })
  t.throws(() => loadServeConfig({ ANVIL_CONFIG: join(dir, 'missing.yaml') }), { message: /cannot read .*missing\.yaml: ENOENT/ })
  t.same(loadDevConfig({ STRIPE_WHSEC: 'whsec_x_0123456789' }, { config: file }).sources, config.sources, 'anvil dev reads it too')
})

t.test('anvil serve --config: a real gateway verifies a Stripe request from the file', async (t) => {
  const file = join(dir, 'serve.json')
  writeFileSync(file, JSON.stringify({ sources: [{ path: '/stripe', provider: 'stripe', secrets: ['${STRIPE_WHSEC}'] }] }))
  const child = spawn(process.execPath, ['dist/cli/anvil.js', 'serve', '--config', file], {
    env: { PATH: process.env.PATH, REDIS_URL: redis.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', STRIPE_WHSEC: STRIPE_SECRET, ANVIL_QUEUE: 'cli-sources' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  t.teardown(() => { child.kill('SIGTERM') })
  const listening = (): string | undefined => output.split('\n').find((line) => line.includes('"anvil serve: listening"'))
  await eventually('anvil serve: listening', () => {
    if (child.exitCode !== null) throw new Error(`anvil serve exited ${String(child.exitCode)}: ${output}`)
    return listening() !== undefined
  })
  const port = (JSON.parse(listening() as string) as { port: number }).port
  const body = '{"id":"evt_cli","type":"invoice.paid"}'
  const headers = stripeHeaders(body)
  const res = await fetch(`http://127.0.0.1:${port}/stripe`, { method: 'POST', headers, body })
  t.equal(res.status, 202)
  const queue = inspectQueue(redis.url, 'cli-sources')
  t.teardown(() => queue.close())
  const { jobId } = await res.json() as { jobId: string }
  t.match((await queue.getJob(jobId))?.data, { provider: 'stripe', eventType: 'invoice.paid', eventId: 'evt_cli' })
  t.notOk(output.includes(STRIPE_SECRET), 'the secret is in no log line')
  t.notOk(output.includes(headers['stripe-signature'] as string), 'the signature is in no log line')
})

t.test("signatures and secrets never reach a log line: every preset's header, and sources' secrets", async (t) => {
  const lines: string[] = []
  const destination = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done() } })
  const log = createLogger('info', destination)
  const headers = Object.fromEntries(SIGNATURE_HEADERS.map((name) => [name, `sig-${name}`]))
  log.info({ req: { headers }, headers, sources: [{ path: '/a', secrets: ['secret-in-source'] }], options: { sources: [{ secrets: ['nested-secret'] }] } })
  log.info({ signature: 'top-signature', job: { signature: 'job-signature' } })
  const text = lines.join('')
  for (const name of SIGNATURE_HEADERS) t.notOk(text.includes(`sig-${name}`), name)
  for (const secret of ['secret-in-source', 'nested-secret', 'top-signature', 'job-signature']) t.notOk(text.includes(secret), secret)
  t.ok(text.includes('/a'), 'the rest is logged')
})

t.test("docs/providers.md's sources example has one source per preset, and parses as a sources file", async (t) => {
  const doc = readFileSync(join(ROOT, 'docs/providers.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## A sources file'))
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  const names = new Set([...yaml.matchAll(/\$\{([A-Z_]+)\}/g)].map((m) => m[1] as string))
  const env = Object.fromEntries([...names].map((name) => [name, `value-of-${name}`]))
  const sources = parseSourcesFile(yaml, 'docs/providers.md', env)
  t.same(sources.map((s) => s.provider).sort(), [...PROVIDER_NAMES].sort())
})
