/**
 * An `anvil serve` process SIGKILLed under load. Every 202 a client received names a job that
 * is in Redis; the deliveries that got no answer are redelivered (as a provider does) to a fresh process,
 * and then every event has exactly one job.
 */
import t from 'tap'
import { DEFAULT_PREFIX } from '../../src/shared/constants.js'
import { signAnvil } from '../../src/providers/anvil.js'
import { SECRET } from '../helpers/app.js'
import { inspect, startCli, type Cli } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const queueName = 'faults-ingress-kill'

function serve (): Cli {
  return startCli(t, ['serve'], {
    env: { REDIS_URL: redis.url, WEBHOOK_SECRET: SECRET, ANVIL_QUEUE: queueName, HOST: '127.0.0.1', PORT: '0', ANVIL_METRICS_PATH: 'off' }
  })
}

async function port (cli: Cli): Promise<number> {
  return (await cli.log('anvil serve: listening')).port as number
}

interface Answer { status: number, jobId?: string, replayed?: boolean }

/** One signed delivery; undefined when the connection died without an answer. */
async function deliver (url: string, id: string): Promise<Answer | undefined> {
  const body = JSON.stringify({ id, type: 'test.load' })
  try {
    const response = await fetch(url, {
      method: 'POST', body, headers: { 'content-type': 'application/json', 'x-signature': signAnvil(SECRET, Buffer.from(body)) }
    })
    const json = await response.json() as { jobId?: string, replayed?: boolean }
    return { status: response.status, jobId: json.jobId, replayed: json.replayed }
  } catch {
    return undefined
  }
}

t.test('ingress SIGKILLed under load: every 202 names a job in Redis; redelivery then leaves one job per event', async (t) => {
  const first = serve()
  const url = `http://127.0.0.1:${await port(first)}/webhooks`
  const answers = new Map<string, Answer | undefined>()
  let next = 0
  let accepted = 0
  const KILL_AFTER = 400
  let killing: Promise<unknown> | undefined
  // 16 senders keep requests in flight all the time; the kill comes from a timer, not from an answer, so
  // it lands at any point of a request's life. No new request is sent once the kill is on its way.
  await Promise.all(Array.from({ length: 16 }, async () => {
    // The exit check only guards against a process that died by itself (the test then fails below).
    while (killing === undefined && first.child.exitCode === null) {
      const id = `evt_${next++}`
      const answer = await deliver(url, id)
      answers.set(id, answer)
      if (answer?.status === 202) accepted++
      if (accepted === KILL_AFTER) setTimeout(() => { killing ??= first.stop('SIGKILL') }, 3)
    }
  }))
  t.equal(await killing, null, 'the ingress process is gone (SIGKILL)')
  t.equal(first.child.signalCode, 'SIGKILL')

  const all = [...answers.values()]
  const unanswered = [...answers].filter(([, answer]) => answer === undefined).map(([id]) => id)
  t.same(new Set(all.filter((a) => a !== undefined).map((a) => a.status)), new Set([202]), 'every answer given was a 202')
  t.comment(`sent ${answers.size}, 202 ${accepted}, in flight at the kill (no answer) ${unanswered.length}`)

  const main = inspect(t, redis.url, queueName)
  let missing = 0
  for (const [id, answer] of answers) {
    if (answer?.status !== 202) continue
    const job = await main.getJob(answer.jobId as string)
    if (job === undefined || JSON.parse(Buffer.from(job.data.payload, 'base64').toString('utf8')).id !== id) missing++
  }
  t.equal(missing, 0, `each of the ${accepted} 202s names a job in Redis holding that event`)
  const jobsAfterKill = await main.count()
  t.ok(jobsAfterKill >= accepted && jobsAfterKill <= answers.size,
    `${jobsAfterKill} jobs: every 202, plus at most the unanswered deliveries Redis took before the process died`)

  // The provider retries what got no answer; the dedupe window sees the ones Redis already has.
  const second = serve()
  const url2 = `http://127.0.0.1:${await port(second)}/webhooks`
  let replayed = 0
  for (const id of unanswered) {
    const answer = await deliver(url2, id)
    if (answer?.replayed === true) replayed++
    answers.set(id, answer)
  }
  t.same(unanswered.filter((id) => answers.get(id)?.status !== 202), [], 'every redelivery got a 202')
  t.equal(replayed, jobsAfterKill - accepted, 'the redeliveries Redis had already taken are replays of their job')
  const jobIds = new Set([...answers.values()].map((answer) => answer?.jobId))
  t.equal(jobIds.size, answers.size, 'one job per event')
  t.equal(await main.count(), answers.size, 'and no other job in the queue')
  const dedupeKeys = await redis.command('eval', "return #redis.call('keys', ARGV[1])", 0, `${DEFAULT_PREFIX}:${queueName}:de:*`)
  t.equal(dedupeKeys, answers.size, 'one dedupe key per event')
  t.comment(`redelivered ${unanswered.length}, of which ${replayed} were already in Redis`)
  t.equal(await second.stop('SIGTERM'), 0)
})
