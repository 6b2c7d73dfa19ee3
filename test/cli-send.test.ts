/**
 * `anvil send`, as users run it, against real `anvil serve`, `anvil worker` and `anvil dev` processes: the
 * answers (202; replayed: true on --redeliver; 401 with a wrong secret), one clear line for each mistake, a
 * router module as `anvil worker --handler`, and the send lines `anvil dev` prints for its sources. Helpers:
 * test/helpers/cli.ts.
 */
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fixture, generateKeyPair } from '../testing/index.js'
import { planSend, type SendFlags } from '../cli/send.js'
import { CLI, parseJson, ROOT, runCli, shell, startCli, tempDir } from './helpers/cli.js'
import { freePort, TestRedis } from './helpers/redis.js'

const redis = await TestRedis.start()
t.teardown(() => redis.stop())

const STRIPE_SECRET = 'whsec_send_test_0123456789'
const dir = tempDir(t)
writeFileSync(join(dir, 'sources.yaml'), 'sources:\n  - { path: /webhooks/stripe, provider: stripe, secrets: ["${STRIPE_SECRET}"] }\n')

// The ingress, and the example's typed Stripe router as the worker's handler module.
const port = await freePort()
const url = `http://127.0.0.1:${port}/webhooks/stripe`
const serve = startCli(t, ['serve', '--config', join(dir, 'sources.yaml'), '--port', String(port)], {
  env: { REDIS_URL: redis.url, STRIPE_SECRET, HOST: '127.0.0.1', ANVIL_QUEUE: 'cli-send' }
})
const worker = startCli(t, ['worker', '--handler', 'dist/examples/stripe-handlers.js'], {
  cwd: ROOT, env: { REDIS_URL: redis.url, ANVIL_QUEUE: 'cli-send', HOST: '127.0.0.1', PORT: '0' }
})
await serve.log('anvil serve: listening', { port })
await worker.log('anvil worker: started')
t.teardown(async () => { await worker.stop(); await serve.stop() })

const send = async (args: string[], env: Record<string, string> = { ANVIL_SEND_SECRET: STRIPE_SECRET }): Promise<{ code: number | null, answers: Array<Record<string, any>>, stderr: string }> => {
  const result = await runCli(['send', ...args], { cwd: dir, env })
  return { code: result.code, answers: result.stdout.split('\n').filter(Boolean).map((line) => parseJson(line) ?? {}), stderr: result.stderr }
}

t.test('send --event: 202, and the router module in `anvil worker` handles the typed event', async (t) => {
  const { code, answers } = await send([url, '--provider', 'stripe', '--event', 'checkout.session.completed'])
  t.equal(code, 0)
  t.match(answers, [{ status: 202, answer: { jobId: /^e_/, replayed: false } }])
  const handled = parseJson(await worker.line((line) => parseJson(line)?.fulfil !== undefined))
  t.match(handled, { fulfil: /^cs_test_/, amount: 2000, email: 'jenny.rosen@example.com' })
})

t.test('send --redeliver: the same event re-signed is replayed: true, with the same job', async (t) => {
  const { code, answers } = await send([url, '--provider', 'stripe', '--event', 'invoice.paid', '--redeliver'])
  t.equal(code, 0)
  t.match(answers, [{ status: 202, delivery: 'first', answer: { replayed: false } }, { status: 202, delivery: 'redelivery', answer: { replayed: true } }])
  t.equal(answers[1]?.answer.jobId, answers[0]?.answer.jobId)
})

t.test('send --times 2 --file: a file as the body, sent twice (its id is the same: the second is a duplicate)', async (t) => {
  writeFileSync(join(dir, 'event.json'), JSON.stringify(fixture('stripe', 'charge.refunded').body))
  const { code, answers } = await send([url, '--provider', 'stripe', '--file', 'event.json', '--times', '2'])
  t.equal(code, 0)
  t.match(answers, [{ status: 202, answer: { replayed: false } }, { status: 202, answer: { replayed: true } }])
  const fresh = await send([url, '--provider', 'stripe', '--event', 'payment_intent.succeeded', '--times', '2'])
  t.not(fresh.answers[0]?.answer.jobId, fresh.answers[1]?.answer.jobId, 'samples get fresh ids each time')
})

t.test('send with a wrong secret: the 401 answer is printed, exit 1; the secret may come from --secret-file', async (t) => {
  const wrong = await send([url, '--provider', 'stripe', '--event', 'invoice.paid'], { ANVIL_SEND_SECRET: 'whsec_wrong' })
  t.equal(wrong.code, 1)
  t.match(wrong.answers, [{ status: 401, answer: { code: 'ANVIL_ERR_SIGNATURE_INVALID' } }])
  writeFileSync(join(dir, 'secret'), STRIPE_SECRET)
  t.equal((await send([url, '--provider', 'stripe', '--event', 'invoice.paid', '--secret-file', 'secret'], {})).answers[0]?.status, 202)
})

t.test('send: each mistake is one clear line and exit 1', async (t) => {
  // Two through the command (the exit path); the other checks in process, on the same function.
  const unused = `http://127.0.0.1:${await freePort()}/webhooks`
  const [provider, unreachable] = await Promise.all([
    send([url, '--provider', 'strype', '--event', 'invoice.paid']),
    send([unused, '--provider', 'stripe', '--event', 'invoice.paid'])
  ])
  t.same([provider.code, provider.stderr], [1, 'anvil: invalid configuration: --provider must be one of anvil, stripe, github, shopify, slack, twilio, standard-webhooks, paddle, linear, square, zoom, gitlab, discord, sendgrid (got "strype")\n'])
  t.same([unreachable.code, unreachable.stderr], [1, `anvil: invalid configuration: cannot reach ${unused}: ECONNREFUSED\n`])
  const env = { ANVIL_SEND_SECRET: STRIPE_SECRET }
  const cases: Array<[string, SendFlags, Record<string, string>, string]> = [
    [url, { provider: 'stripe', event: 'invoice.payed' }, env, '--event: no stripe sample "invoice.payed"; there are checkout.session.completed, payment_intent.succeeded, invoice.paid, customer.subscription.updated, charge.refunded'],
    [url, { provider: 'stripe', file: join(dir, 'missing.json') }, env, `cannot read --file ${join(dir, 'missing.json')}: ENOENT`],
    [url, { provider: 'stripe', event: 'invoice.paid' }, {}, 'a secret is required: set ANVIL_SEND_SECRET (or give --secret-file or --secret)'],
    [url, { provider: 'stripe' }, env, 'give either --event <name> (a built-in sample) or --file <body>'],
    [url, { provider: 'stripe', event: 'invoice.paid', times: '0' }, env, '--times must be a whole number from 1 to 1000 (got "0")'],
    ['ftp://example.com', { provider: 'stripe', event: 'invoice.paid' }, env, 'the URL must be http:// or https:// (got "ftp://example.com")']
  ]
  for (const [target, flags, environment, message] of cases) {
    t.throws(() => planSend(target, flags, environment), { code: 'ANVIL_ERR_INVALID_CONFIG', message: `Invalid configuration: ${message}` }, message)
  }
})

t.test('anvil dev prints a ready `anvil send` line per source; each works as printed', async (t) => {
  const discord = generateKeyPair('discord')
  const devDir = tempDir(t)
  writeFileSync(join(devDir, 'sources.yaml'), [
    'sources:',
    '  - { path: /webhooks/github, provider: github, secrets: ["gh-dev-secret"] }',
    `  - { path: /webhooks/discord, provider: discord, secrets: ["${discord.publicKey}"] }`,
    '  - { path: /webhooks/twilio, provider: twilio, secrets: ["tw-dev-secret"], publicUrl: "https://hooks.example.com/twilio" }'
  ].join('\n') + '\n')
  const devPort = await freePort()
  const dev = startCli(t, ['dev', '--config', 'sources.yaml', '--port', String(devPort)], {
    cwd: devDir, env: { REDIS_URL: redis.url, ANVIL_QUEUE: 'cli-send-dev' }
  })
  const printed = async (provider: string): Promise<string> => (await dev.line((line) => line.includes(`anvil send `) && line.includes(`--provider ${provider} `))).trim()
  const lines = { github: await printed('github'), discord: await printed('discord'), twilio: await printed('twilio') }
  t.equal(lines.github, `anvil send http://127.0.0.1:${devPort}/webhooks/github --provider github --event 'push'`)
  t.equal(lines.twilio, `anvil send http://127.0.0.1:${devPort}/webhooks/twilio --provider twilio --event 'incoming_message' --public-url https://hooks.example.com/twilio`)
  writeFileSync(join(devDir, 'discord.pem'), discord.privateKeyPem)
  const run = async (line: string, secret: string): Promise<Record<string, any> | undefined> =>
    parseJson(await shell(`cd ${devDir} && ${line.replace(/^anvil /, `node ${CLI} `)}`, { ANVIL_SEND_SECRET: secret }))
  t.match(await run(lines.github, 'gh-dev-secret'), { status: 202, answer: { replayed: false } })
  t.match(await run(lines.twilio, 'tw-dev-secret'), { status: 202 })
  t.match(await run(lines.discord, discord.privateKeyPem), { status: 200, answer: { type: 5 } }, 'a deferred interaction response')
  await dev.log('anvil dev: event', { eventType: 'push' })
  t.equal(await dev.stop('SIGTERM'), 0)
})
