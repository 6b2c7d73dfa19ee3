/**
 * `anvil send`, as users run it, against real `anvil serve`, `anvil worker` and `anvil dev` processes: the
 * answers (202; replayed: true on --redeliver; 401 with a wrong secret), one clear line for each mistake, a
 * router module as `anvil worker --handler`, and the send lines `anvil dev` prints for its sources. The
 * command runs as a process where its exit code and output are the point; the other cases call the same
 * functions (planSend, send) in this process, against the same servers, sparing a Node start each.
 * Helpers: test/helpers/cli.ts.
 */
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fixture, generateKeyPair } from '../../testing/index.js'
import { planSend, send as sendInProcess, type SendFlags } from '../../cli/send.js'
import { CLI, parseJson, ROOT, runCli, shell, startCli, tempDir, type Cli } from '../helpers/cli.js'
import { freePort, TestRedis } from '../helpers/redis.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const STRIPE_SECRET = 'whsec_send_test_0123456789'
const dir = tempDir(t)
writeFileSync(join(dir, 'sources.yaml'), 'sources:\n  - { path: /webhooks/stripe, provider: stripe, secrets: ["${STRIPE_SECRET}"] }\n')

// `anvil dev`'s sources, for the send lines it prints.
const discord = generateKeyPair('discord')
const devDir = tempDir(t)
writeFileSync(join(devDir, 'sources.yaml'), [
  'sources:',
  '  - { path: /webhooks/github, provider: github, secrets: ["gh-dev-secret-0123456789"] }',
  `  - { path: /webhooks/discord, provider: discord, secrets: ["${discord.publicKey}"] }`,
  '  - { path: /webhooks/twilio, provider: twilio, secrets: ["tw-dev-secret-0123456789"], publicUrl: "https://hooks.example.com/twilio" }'
].join('\n') + '\n')

// The ingress, the example's typed Stripe router as the worker's handler module, and `anvil dev`, started
// together so that their start-ups overlap.
let url: string
let serve: Cli, worker: Cli, dev: Cli
beforeStep(t, async () => {
  serve = startCli(t, ['serve', '--config', join(dir, 'sources.yaml'), '--port', '0'], {
    env: { REDIS_URL: redis.url, STRIPE_SECRET, HOST: '127.0.0.1', ANVIL_QUEUE: 'cli-send' }
  })
  worker = startCli(t, ['worker', '--handler', 'dist/examples/stripe-handlers.js'], {
    cwd: ROOT, env: { REDIS_URL: redis.url, ANVIL_QUEUE: 'cli-send', HOST: '127.0.0.1', PORT: '0' }
  })
  dev = startCli(t, ['dev', '--config', 'sources.yaml', '--port', '0'], {
    cwd: devDir, env: { REDIS_URL: redis.url, ANVIL_QUEUE: 'cli-send-dev' }
  })
  const [port] = await Promise.all([serve.listeningPort('anvil serve: listening'), worker.log('anvil worker: started')])
  url = `http://127.0.0.1:${port}/webhooks/stripe`
  t.teardown(async () => { await worker.stop(); await serve.stop() })
})

type Answers = Array<Record<string, any>>
const STRIPE_ENV = { ANVIL_SEND_SECRET: STRIPE_SECRET }

/** `anvil send` as a process: its exit code, its answers (one JSON line each) and its stderr. */
async function send (args: string[], env: Record<string, string> = STRIPE_ENV): Promise<{ code: number | null, answers: Answers, stderr: string }> {
  const result = await runCli(['send', ...args], { cwd: dir, env })
  return { code: result.code, answers: result.stdout.split('\n').filter(Boolean).map((line) => parseJson(line) ?? {}), stderr: result.stderr }
}

/** The command's work, in this process: whether every answer was a 2xx, and the answers. */
async function sendHere (target: string, flags: SendFlags, env: Record<string, string> = STRIPE_ENV): Promise<{ ok: boolean, answers: Answers }> {
  const lines: string[] = []
  const ok = await sendInProcess(planSend(target, flags, env), (line) => lines.push(line))
  return { ok, answers: lines.map((line) => parseJson(line) ?? {}) }
}

t.test('send --event: 202, and the router module in `anvil worker` handles the typed event', async (t) => {
  const { code, answers } = await send([url, '--provider', 'stripe', '--event', 'checkout.session.completed'])
  t.equal(code, 0)
  t.match(answers, [{ status: 202, answer: { jobId: /^e_/, replayed: false } }])
  const handled = parseJson(await worker.line((line) => parseJson(line)?.fulfil !== undefined))
  t.match(handled, { fulfil: /^cs_test_/, amount: 2000, email: 'jenny.rosen@example.com' })
})

t.test('send --redeliver: the same event re-signed is replayed: true, with the same job', async (t) => {
  const { ok, answers } = await sendHere(url, { provider: 'stripe', event: 'invoice.paid', redeliver: true })
  t.equal(ok, true)
  t.match(answers, [{ status: 202, delivery: 'first', answer: { replayed: false } }, { status: 202, delivery: 'redelivery', answer: { replayed: true } }])
  t.equal(answers[1]?.answer.jobId, answers[0]?.answer.jobId)
})

t.test('send --times 2 --file: a file as the body, sent twice (its id is the same: the second is a duplicate)', async (t) => {
  writeFileSync(join(dir, 'event.json'), JSON.stringify(fixture('stripe', 'charge.refunded').body))
  const { ok, answers } = await sendHere(url, { provider: 'stripe', file: join(dir, 'event.json'), times: '2' })
  t.equal(ok, true)
  t.match(answers, [{ status: 202, answer: { replayed: false } }, { status: 202, answer: { replayed: true } }])
  const fresh = await sendHere(url, { provider: 'stripe', event: 'payment_intent.succeeded', times: '2' })
  t.not(fresh.answers[0]?.answer.jobId, fresh.answers[1]?.answer.jobId, 'samples get fresh ids each time')
})

t.test('send with a wrong secret: the 401 answer is printed, exit 1; the secret may come from --secret-file', async (t) => {
  const wrong = await send([url, '--provider', 'stripe', '--event', 'invoice.paid'], { ANVIL_SEND_SECRET: 'whsec_wrong' })
  t.equal(wrong.code, 1)
  t.match(wrong.answers, [{ status: 401, answer: { code: 'ANVIL_ERR_SIGNATURE_INVALID' } }])
  writeFileSync(join(dir, 'secret'), STRIPE_SECRET)
  t.equal((await sendHere(url, { provider: 'stripe', event: 'invoice.paid', secretFile: join(dir, 'secret') }, {})).answers[0]?.status, 202)
})

t.test('send: each mistake is one clear line and exit 1', async (t) => {
  // One through the command (the exit path); the others in this process, on the same functions.
  const provider = await send([url, '--provider', 'strype', '--event', 'invoice.paid'])
  t.same([provider.code, provider.stderr], [1, 'anvil: invalid configuration: --provider must be one of anvil, stripe, github, shopify, slack, twilio, standard-webhooks, paddle, linear, square, zoom, gitlab, discord, sendgrid (got "strype")\n'])
  const unused = `http://127.0.0.1:${await freePort()}/webhooks`
  await t.rejects(sendHere(unused, { provider: 'stripe', event: 'invoice.paid' }), { code: 'ANVIL_ERR_INVALID_CONFIG', message: `Invalid configuration: cannot reach ${unused}: ECONNREFUSED` })
  const cases: Array<[string, SendFlags, Record<string, string>, string]> = [
    [url, { provider: 'stripe', event: 'invoice.payed' }, STRIPE_ENV, '--event: no stripe sample "invoice.payed"; did you mean "invoice.paid"? (37 samples)'],
    [url, { provider: 'gitlab', event: 'nothing.like.it' }, STRIPE_ENV, '--event: no gitlab sample "nothing.like.it"; there are Push Hook, Merge Request Hook'],
    [url, { provider: 'stripe', file: join(dir, 'missing.json') }, STRIPE_ENV, `cannot read --file ${join(dir, 'missing.json')}: ENOENT`],
    [url, { provider: 'stripe', event: 'invoice.paid' }, {}, 'a secret is required: set ANVIL_SEND_SECRET (or give --secret-file or --secret)'],
    [url, { provider: 'stripe' }, STRIPE_ENV, 'give either --event <name> (a built-in sample) or --file <body>'],
    [url, { provider: 'stripe', event: 'invoice.paid', times: '0' }, STRIPE_ENV, '--times must be a whole number from 1 to 1000 (got "0")'],
    ['ftp://example.com', { provider: 'stripe', event: 'invoice.paid' }, STRIPE_ENV, 'the URL must be http:// or https:// (got "ftp://example.com")']
  ]
  for (const [target, flags, environment, message] of cases) {
    t.throws(() => planSend(target, flags, environment), { code: 'ANVIL_ERR_INVALID_CONFIG', message: `Invalid configuration: ${message}` }, message)
  }
})

t.test('anvil dev prints a ready `anvil send` line per source; each works as printed', async (t) => {
  const devPort = await dev.listeningPort('anvil dev: listening')
  const printed = async (provider: string): Promise<string> => (await dev.line((line) => line.includes('anvil send ') && line.includes(`--provider ${provider} `))).trim()
  const lines = { github: await printed('github'), discord: await printed('discord'), twilio: await printed('twilio') }
  t.equal(lines.github, `npx anvil send http://127.0.0.1:${devPort}/webhooks/github --provider github --event 'push'`)
  t.equal(lines.discord, `npx anvil send http://127.0.0.1:${devPort}/webhooks/discord --provider discord --event 'APPLICATION_COMMAND'`)
  t.equal(lines.twilio, `npx anvil send http://127.0.0.1:${devPort}/webhooks/twilio --provider twilio --event 'incoming_message' --public-url https://hooks.example.com/twilio`)
  // One line through a shell, exactly as printed; the other two read into the command's flags, in this process.
  // Verbatim, in a clone: npx finds the package's own `anvil` (offline: it never asks the registry).
  const github = parseJson(await shell(`cd ${ROOT} && ${lines.github}`, { ANVIL_SEND_SECRET: 'gh-dev-secret-0123456789', npm_config_offline: 'true' }))
  t.match(github, { status: 202, answer: { replayed: false } })
  t.match((await sendHere(...printedFlags(lines.twilio), { ANVIL_SEND_SECRET: 'tw-dev-secret-0123456789' })).answers, [{ status: 202 }])
  t.match((await sendHere(...printedFlags(lines.discord), { ANVIL_SEND_SECRET: discord.privateKeyPem })).answers, [{ status: 200, answer: { type: 5 } }], 'a deferred interaction response')
  await dev.log('anvil dev: event', { eventType: 'push' })
  t.equal(await dev.stop('SIGTERM'), 0)
})

/** A printed `npx anvil send <url> --provider p --event 'name' [--public-url u]` line as the command's arguments. */
function printedFlags (line: string): [string, SendFlags] {
  const words = line.split(' ').map((word) => word.replace(/^'(.*)'$/, '$1'))
  const flag = (name: string): string | undefined => {
    const at = words.indexOf(name)
    return at < 0 ? undefined : words[at + 1]
  }
  return [words[3] as string, { provider: flag('--provider'), event: flag('--event'), publicUrl: flag('--public-url') }]
}
