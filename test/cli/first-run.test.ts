/**
 * The first run, as the README's Quickstart tells it, through the real CLI (test/helpers/cli.ts): Stripe in
 * five minutes (`anvil dev --config … --handler …`), `npm start`'s fresh test event on every run, pretty logs
 * on a terminal, and `anvil serve` + `anvil worker` with the output the README shows.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Stripe from 'stripe'
import { CLI, GIVE_UP_MS, curlResponse, HAS_CURL, parseJson, readmeBlock, sendPrinted, shell, startCli, tempDir } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

t.test('Stripe in five minutes: the README\'s handler and sources file, run by anvil dev, handle a signed Stripe event', async (t) => {
  const cwd = tempDir(t)
  writeFileSync(join(cwd, 'my-handler.js'), readmeBlock('js', 'my-handler.js'))
  writeFileSync(join(cwd, 'sources.yaml'), readmeBlock('yaml', '/webhooks/stripe'))
  const command = readmeBlock('sh', 'stripe listen --print-secret').split('\n').find((line) => line.includes('anvil.js dev')) as string
  t.equal(command, 'node dist/cli/anvil.js dev --config sources.yaml --handler ./my-handler.js')
  const secret = 'whsec_test_stripe_cli'
  // The command's arguments, run from the directory that holds the two files.
  const cli = startCli(t, [...command.split(' ').slice(2), '--port', '0'], {
    cwd, env: { STRIPE_WEBHOOK_SECRET: secret, REDIS_URL: redis.url, ANVIL_QUEUE: 'first-run-stripe' }
  })
  const port = Number((await cli.log('anvil dev: listening', { handler: './my-handler.js' })).port)
  t.ok(cli.lines.some((line) => line.includes(`stripe: http://127.0.0.1:${port}/webhooks/stripe`)), 'the banner lists the Stripe route')

  // What `stripe listen` forwards: an event signed with the endpoint's secret.
  const event = JSON.stringify({ id: 'evt_3QfirstRun', object: 'event', type: 'payment_intent.succeeded', data: { object: { id: 'pi_3QfirstRun', object: 'payment_intent' } } })
  const signature = new Stripe('sk_test_anvil').webhooks.generateTestHeaderString({ payload: event, secret })
  const response = await fetch(`http://127.0.0.1:${port}/webhooks/stripe`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: event
  })
  t.equal(response.status, 202)
  t.match(await response.json(), { jobId: /^e_/, replayed: false })
  t.ok(await cli.line((line) => line === 'payment_intent.succeeded evt_3QfirstRun: pi_3QfirstRun, attempt 1 of 5'), 'the handler\'s line')
  t.notOk(cli.lines.some((line) => parseJson(line)?.msg === 'anvil dev: event'), 'your handler, not the logging one')
  t.equal(await cli.stop(), 0)
  t.notMatch(cli.output, secret, 'the secret is never printed')
})

t.test('npm start twice: each run prints a new event id, so the second run\'s curl is a new job, not replayed', async (t) => {
  const ids: string[] = []
  const project = tempDir(t)
  for (const run of [1, 2]) {
    const cli = startCli(t, ['dev', '--port', '0'], { cwd: project, env: { REDIS_URL: redis.url, ANVIL_QUEUE: 'first-run-twice' } })
    const curl = (await cli.line((line) => line.startsWith('  curl '))).trim()
    const id = (JSON.parse(/--data '([^']*)'/.exec(curl)?.[1] as string) as { id: string }).id
    ids.push(id)
    const sent = await sendPrinted(curl)
    t.equal(sent.status, 202)
    t.match(sent.body, { replayed: false }, `run ${run}: a new job`)
    await cli.log('anvil dev: event', { eventId: id })
    t.match((await sendPrinted(curl)).body, { replayed: true }, `run ${run}: the same curl again is the same job`)
    t.equal(await cli.stop(), 0)
  }
  t.not(ids[0], ids[1])
})

/** Without terminal colours. */
const plain = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, '')

t.test('anvil dev on a terminal pretty-prints its log lines; piped, they stay JSON', async (t) => {
  // util-linux `script` gives the process a pseudo-terminal; its output is what a person would see.
  const screen = await new Promise<string>((resolve) => {
    const child = execFile('script', ['-qfec', `${process.execPath} ${CLI} dev --port 0`, '/dev/null'],
      { cwd: tempDir(t), env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', REDIS_URL: redis.url, ANVIL_QUEUE: 'first-run-tty', TERM: 'xterm' } },
      (_err, stdout) => resolve(stdout))
    const guard = setTimeout(() => child.kill('SIGKILL'), GIVE_UP_MS)
    let seen = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString()
      // The listening line's last field is the handler: then the line is whole.
      if (plain(seen).includes('handler: "logging"')) {
        clearTimeout(guard)
        child.kill('SIGINT')
      }
    })
  })
  const lines = plain(screen).split(/\r?\n/)
  const at = lines.findIndex((line) => line.includes('anvil dev: listening'))
  t.ok(at >= 0, screen)
  // pino-pretty's shape: [time] LEVEL: message, then the fields, one per line, indented.
  t.match(lines[at], /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: anvil dev: listening$/)
  t.equal(parseJson(lines[at] as string), undefined, 'not a JSON line')
  // The port it bound, as its banner shows it.
  const port = /anvil dev: ready on http:\/\/127\.0\.0\.1:(\d+)\//.exec(plain(screen))?.[1]
  t.ok(port, 'the banner names the port')
  t.same(lines.slice(at + 1, at + 4).map((line) => line.trim()), ['host: "127.0.0.1"', `port: ${port}`, 'handler: "logging"'])
})

t.test('the README\'s anvil serve + anvil worker quickstart: serve alone queues, the worker runs it, the output is as shown', async (t) => {
  const block = readmeBlock('sh', 'openssl dgst')
  const lines = block.split('\n')
  const env = Object.fromEntries([...(lines.find((line) => line.startsWith('export ')) as string).matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]]))
  t.same(Object.keys(env), ['WEBHOOK_SECRET', 'REDIS_URL'])
  const serveArgs = (lines.find((line) => line.includes('anvil.js serve')) as string).split('&')[0]?.trim().split(' ').slice(2) as string[]
  const workerLine = lines.find((line) => line.includes('anvil.js worker')) as string
  const workerArgs = workerLine.split('&')[0]?.trim().split(' ').slice(3) as string[]
  t.same(serveArgs, ['serve'])
  t.same(workerArgs, ['worker', '--handler', './examples/handler.js'])

  const queue = { ANVIL_QUEUE: 'first-run-serve' }
  const serve = startCli(t, serveArgs, { env: { ...env, ...queue, REDIS_URL: redis.url, HOST: '127.0.0.1', PORT: '0' } })
  const port = await serve.listeningPort('anvil serve: listening')
  const script = lines.filter((line) => !/^(npm |export |#)|anvil\.js/.test(line)).join('\n').replaceAll('http://127.0.0.1:3000', `http://127.0.0.1:${port}`)
  if (!HAS_CURL) return t.comment('curl is not on PATH: the README block was not run')
  const first = await shell(script, { WEBHOOK_SECRET: env.WEBHOOK_SECRET as string })
  const accepted = curlResponse(first)
  t.match(accepted, { status: 202, body: { jobId: /^e_/, replayed: false } })
  const { jobId } = accepted.body as { jobId: string }

  // The README's curl output: the same status line and the same headers, in the same order; only values differ.
  const shown = readmeBlock('text', 'HTTP/1.1 202 Accepted')
  const headerNames = (text: string): string[] => text.split(/\r?\n\r?\n/)[0]?.split(/\r?\n/).map((line) => line.split(':')[0] as string) ?? []
  t.same(headerNames(first), headerNames(shown))
  t.same(Object.keys(JSON.parse(shown.trim().split('\n').at(-1) as string)), Object.keys(accepted.body as object))

  // Nothing ran it yet: serve alone only queues. Then the worker, as the README starts it.
  const worker = startCli(t, workerArgs, { env: { ...env, ...queue, REDIS_URL: redis.url, HOST: '127.0.0.1', PORT: '0' } })
  const handled = parseJson(await worker.line((line) => parseJson(line)?.handled === jobId)) as Record<string, unknown>
  const shownWorker = readmeBlock('text', '"handled"').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
  t.same(Object.keys(handled), Object.keys(shownWorker[0] as object), 'the sample handler\'s line, as shown')
  t.match(handled, { eventId: 'evt_1', type: 'test.ping', attempt: 1, bytes: 33 })
  const completed = await worker.log('anvil worker: job completed', { jobId })
  t.same(Object.keys(completed).sort(), Object.keys(shownWorker[1] as object).sort(), 'the worker\'s line, as shown')

  t.match(curlResponse(await shell(script, { WEBHOOK_SECRET: env.WEBHOOK_SECRET as string })), { status: 202, body: { jobId, replayed: true } },
    'the same curl again: the same job')
  t.equal(await worker.stop(), 0)
  t.equal(worker.lines.filter((line) => parseJson(line)?.handled !== undefined).length, 1, 'the worker ran it once')
  t.equal(await serve.stop(), 0)
})
