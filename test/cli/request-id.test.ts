/**
 * One request id through the whole chain: `anvil serve`'s request lines, the job's data, `anvil worker`'s
 * per-job lines (with the jobId), and a replay. An x-request-id that is not a plain short id is replaced.
 * Helpers: test/helpers/cli.ts.
 */
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { IncomingMessage } from 'node:http'
import { requestIdOf } from '../../cli/server.js'
import { isAnvilError } from '../../src/shared/errors.js'
import { signAnvil } from '../../src/providers/anvil.js'
import { buildApp, signed } from '../helpers/app.js'
import { inspect, parseJson, runCli, startCli, tempDir, type Cli } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const SECRET = 'whsec_reqid_0123456'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const entries = (cli: Cli): Array<Record<string, unknown>> =>
  cli.lines.map(parseJson).filter((entry): entry is Record<string, unknown> => entry !== undefined)

async function startServe (t: Test, queueName: string): Promise<{ cli: Cli, post: (body: string, requestId?: string) => Promise<string> }> {
  const cli = startCli(t, ['serve'], {
    env: { REDIS_URL: redis.url, WEBHOOK_SECRET: SECRET, HOST: '127.0.0.1', PORT: '0', ANVIL_QUEUE: queueName, ANVIL_RETRY_SCHEDULE: 'none' }
  })
  const port = await cli.listeningPort('anvil serve: listening')
  const post = async (body: string, requestId?: string): Promise<string> => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-signature': signAnvil(SECRET, body) }
    if (requestId !== undefined) headers['x-request-id'] = requestId
    const response = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers, body })
    t.equal(response.status, 202)
    return (await response.json() as { jobId: string }).jobId
  }
  return { cli, post }
}

// One `anvil serve` for both contracts (a start costs about 1 s of CPU): the ids checked first, while no worker
// takes the queue, then the whole chain through a worker.
t.test('anvil serve with x-request-id headers', async (t) => {
  const queueName = 'cli-reqid'
  const { cli: serve, post } = await startServe(t, queueName)

  await t.test('an x-request-id that is too long or has other characters is replaced by a UUID, in the logs and on the job', async (t) => {
    const queue = inspect(t, redis.url, queueName)
    const longest = 'a'.repeat(128)
    const cases: Array<[string | undefined, boolean]> = [
      ['a'.repeat(129), false], ['two words', false], ['x"}{"level":60', false], ['ünïcode', false], ['', false], [undefined, false],
      [longest, true], ['A-z_0.9:/+=@', true]
    ]
    for (const [index, [sent, kept]] of cases.entries()) {
      const jobId = await post(`{"id":"evt_bad_${index}"}`, sent)
      const accepted = await serve.log('anvil: accepted', { jobId })
      const stored = (await queue.getJob(jobId))?.data.requestId
      t.equal(stored, accepted.requestId, `${String(sent?.slice(0, 20))}: the job holds the id the logs show`)
      if (kept) t.equal(accepted.requestId, sent, `${sent?.slice(0, 20) ?? ''}: kept`)
      else t.match(accepted.requestId, UUID, `${String(sent?.slice(0, 20))}: replaced`)
    }
  })

  await t.test('x-request-id abc-123: on serve\'s lines, on the job, and on the worker\'s job lines with the jobId; a replay keeps it', async (t) => {
    const dir = tempDir(t)
    writeFileSync(join(dir, 'handler.mjs'), `
      export default async function (event) {
        if (event.json().fail === true) throw new Error('boom')
      }`)
    // debug, to see the start lines too; the completed and failed lines are info and warn (level 30, 40).
    const worker = startCli(t, ['worker', '--handler', 'handler.mjs'], {
      cwd: dir, env: { REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'debug' }
    })
    await worker.log('anvil worker: started')

    const jobId = await post('{"id":"evt_ok"}', 'abc-123')
    const started = await worker.log('anvil worker: job started', { jobId })
    const completed = await worker.log('anvil worker: job completed', { jobId })
    t.match(started, { requestId: 'abc-123', attempt: 1, level: 20 })
    t.match(completed, { requestId: 'abc-123', attempt: 1, level: 30 })
    t.equal((await inspect(t, redis.url, queueName).getJob(jobId))?.data.requestId, 'abc-123', 'the job data holds it')

    const failing = await post('{"id":"evt_fail","fail":true}', 'abc-124')
    t.match(await worker.log('anvil worker: attempt failed', { jobId: failing }), { requestId: 'abc-124', err: 'boom', level: 40 })
    const deadLettered = await worker.log('anvil worker: dead-lettered', { jobId: failing })
    t.equal(deadLettered.requestId, 'abc-124')

    const replay = await runCli(['replay', String(deadLettered.deadLetterId)], { env: { REDIS_URL: redis.url, ANVIL_QUEUE: queueName } })
    t.equal(replay.code, 0, replay.stderr)
    const replayedJobId = (JSON.parse(replay.stdout) as { jobId: string }).jobId
    t.match(await worker.log('anvil worker: attempt failed', { jobId: replayedJobId }), { requestId: 'abc-124' }, 'the replay keeps the original request id')

    t.equal(await serve.stop('SIGTERM'), 0)
    t.equal(await worker.stop('SIGTERM'), 0)
    const request = entries(serve).filter((entry) => entry.requestId === 'abc-123')
    t.same(request.map((entry) => entry.msg), ['incoming request', 'anvil: accepted', 'request completed'], 'every line of the request carries it')
    t.equal(request[1]?.jobId, jobId, 'and the jobId once enqueued')
    t.notOk(entries(serve).some((entry) => 'reqId' in entry), 'the field is requestId, as on the worker\'s lines')
  })
})

t.test('requestIdOf: the header when it is 1-128 of [A-Za-z0-9._:/+=@-], else a fresh UUID each time', async (t) => {
  const of = (value?: string | string[]): string => requestIdOf({ headers: value === undefined ? {} : { 'x-request-id': value } } as unknown as IncomingMessage)
  t.equal(of('lb-1f2e'), 'lb-1f2e')
  t.match(of('bad\nline'), UUID)
  t.match(of(['a', 'b']), UUID)
  t.not(of(), of(), 'generated ids differ')
})

t.test('plugin: the Fastify request id goes on the job; app.anvil.enqueue takes one and checks it', async (t) => {
  const queueName = 'reqid-plugin'
  const app = await buildApp(redis.url, { queueName })
  t.teardown(() => app.close())
  const queue = inspect(t, redis.url, queueName)
  const res = await app.inject(signed('{"id":"evt_plugin"}'))
  t.match((await queue.getJob(res.json().jobId))?.data.requestId, /^req-/, 'Fastify\'s own id')
  const { jobId } = await app.anvil.enqueue({ id: 'evt_app' }, { eventId: 'evt_app', requestId: 'job-from-cron' })
  t.equal((await queue.getJob(jobId))?.data.requestId, 'job-from-cron')
  const rejected = await app.anvil.enqueue({ id: 'evt_bad' }, { requestId: 'no spaces please' }).catch((err: unknown) => err)
  t.ok(isAnvilError(rejected) && rejected.code === 'ANVIL_ERR_INVALID_PAYLOAD', 'an invalid requestId is refused')
})
