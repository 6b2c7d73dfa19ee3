/**
 * Redis SIGKILLed and restarted mid-load, with AOF `appendfsync always`. One `anvil serve` and
 * one `anvil worker` keep running throughout. Every 202 names a job that survived the restart (its job hash,
 * or its handler run when the worker finished it first); during the outage the answers are 503, never 202;
 * afterwards both processes go on by themselves: new events get 202 and the same worker process runs them.
 */
import t from 'tap'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { signAnvil } from '../../src/providers/anvil.js'
import { SECRET } from '../helpers/app.js'
import { inspect, startCli, tempDir, type Cli } from '../helpers/cli.js'

import { TestRedis } from '../helpers/redis.js'
import { handled } from '../fixtures/script.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(['--appendonly', 'yes', '--appendfsync', 'always']), async (redis) => await redis.stop())
const queueName = 'faults-redis-restart'

interface Answer { id: string, status: number, jobId?: string, replayed?: boolean, retryAfter: string | null, phase: Phase }
/** When a request was sent: `killing` while SIGKILL is on its way, `outage` once redis-server has exited. */
type Phase = 'before' | 'killing' | 'outage' | 'restarting' | 'after'

async function deliver (url: string, id: string, phase: Phase): Promise<Answer> {
  const body = JSON.stringify({ id, n: 1, type: 'test.load' })
  const response = await fetch(url, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-signature': signAnvil(SECRET, Buffer.from(body)) }
  })
  const json = await response.json() as { jobId?: string, replayed?: boolean }
  return { id, status: response.status, jobId: json.jobId, replayed: json.replayed, retryAfter: response.headers.get('retry-after'), phase }
}

t.test('Redis SIGKILLed and restarted under load: no acknowledged event lost, 503 meanwhile, both processes recover alone', async (t) => {
  const dir = tempDir(t)
  const handlerLog = join(dir, 'worker.log')
  const common = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HOST: '127.0.0.1', PORT: '0', ANVIL_METRICS_PATH: 'off' }
  // n is 1 in every body: the handler module completes them all.
  const server: Cli = startCli(t, ['serve'], { env: { ...common, WEBHOOK_SECRET: SECRET } })
  // A slow consumer (one job at a time, 20 ms each), so acknowledged events are still waiting when Redis dies.
  const worker: Cli = startCli(t, ['worker', '--handler', 'test/fixtures/record-handler.mjs'], {
    env: { ...common, HANDLER_LOG: handlerLog, WORKER_CONCURRENCY: '1', HANDLER_DELAY_MS: '20' }
  })
  const url = `http://127.0.0.1:${(await server.log('anvil serve: listening')).port as number}/webhooks`
  await worker.log('anvil worker: started')

  const answers: Answer[] = []
  let phase: Phase = 'before'
  let next = 0
  let killedAt = 0
  let handledBeforeKill = new Set<string>()
  let restartedAt = 0
  let firstAcceptedAfterRestart = 0
  const redelivered: string[] = []
  const KILL_AFTER = 300
  const AFTER = 100
  let accepted = 0
  let acceptedAfter = 0
  const senders = Array.from({ length: 8 }, async () => {
    while (acceptedAfter < AFTER) {
      const sentIn = phase
      const answer = await deliver(url, `evt_${next++}`, sentIn)
      answers.push(answer)
      if (answer.status === 202) {
        accepted++
        if (phase === 'restarting' || phase === 'after') {
          firstAcceptedAfterRestart ||= Date.now()
          phase = 'after'
          if (sentIn === 'after') acceptedAfter++
        }
      } else {
        // A provider retries a 503 later; so does this test, once Redis is back.
        redelivered.push(answer.id)
        await sleep(50)
      }
      if (phase === 'before' && accepted >= KILL_AFTER) {
        phase = 'killing'
        await redis.kill()
        killedAt = Date.now()
        handledBeforeKill = new Set(handled(handlerLog).map((h) => h.jobId))
        phase = 'outage'
      }
    }
  })
  // The outage lasts until the ingress has answered at least 20 requests with 503 after the kill.
  await eventually('503s during the outage', () => answers.filter((a) => a.phase === 'outage' && a.status === 503).length >= 20, 30_000)
  phase = 'restarting'
  restartedAt = Date.now()
  await redis.startProcess()
  await Promise.all(senders)

  const byPhase = (p: Phase): Answer[] => answers.filter((a) => a.phase === p)
  const statuses = new Set(answers.map((a) => a.status))
  t.same([...statuses].filter((s) => s !== 202 && s !== 503), [], 'every answer was a 202 or a 503')
  t.same(answers.filter((a) => a.status === 503 && a.retryAfter === null), [], 'every 503 has a Retry-After')
  const outage = byPhase('outage')
  t.ok(outage.filter((a) => a.status === 503).length >= 20, 'requests sent during the outage got 503')
  t.same(outage.filter((a) => a.status === 202), [], 'no request sent while redis-server was down got a 202')
  t.ok(server.child.exitCode === null && worker.child.exitCode === null, 'neither process exited or was restarted')

  // Redis is back from its AOF: every 202 must name a job that is there. An event the worker had run before
  // the kill counts as present too (its completion may be what the kill cut short); those still waiting at
  // the kill must be in Redis.
  const main = inspect(t, redis.url, queueName)
  const acknowledged = answers.filter((a) => a.status === 202)
  const waitingAtKill = acknowledged.filter((a) => a.phase === 'before' && !handledBeforeKill.has(a.jobId as string))
  t.ok(waitingAtKill.length > 0, `${waitingAtKill.length} acknowledged events had not been run when Redis died`)
  const lost: Answer[] = []
  for (const answer of acknowledged) {
    const job = await main.getJob(answer.jobId as string)
    if (job === undefined && !handledBeforeKill.has(answer.jobId as string)) lost.push(answer)
  }
  t.same(lost, [], `all ${acknowledged.length} 202s name a job that survived the restart`)

  // The provider's retries of the 503s now get in, and a redelivery of an acknowledged event is a replay.
  const again = await Promise.all(redelivered.map(async (id) => await deliver(url, id, 'after')))
  t.same(again.filter((a) => a.status !== 202), [], `all ${redelivered.length} deliveries answered 503 are accepted when retried`)
  const before = byPhase('before').filter((a) => a.status === 202).slice(0, 20)
  const replays = await Promise.all(before.map(async (a) => await deliver(url, a.id, 'after')))
  t.same(replays.map((a) => [a.jobId, a.replayed]), before.map((a) => [a.jobId, true]), 'the dedupe keys survived the restart too')

  // The same worker process, never restarted, runs the events accepted after the restart.
  const afterIds = new Set([...byPhase('after'), ...again].filter((a) => a.status === 202).map((a) => a.jobId as string))
  await eventually('the worker to run every event accepted after the restart', () => {
    const done = new Set(handled(handlerLog).map((h) => h.jobId))
    return [...afterIds].every((id) => done.has(id))
  }, 30_000)
  t.same(new Set(handled(handlerLog).map((h) => h.pid)), new Set([worker.child.pid]), 'one worker process ran everything')
  await eventually('those jobs to be completed', async () => {
    for (const id of afterIds) if (await main.getJobState(id) !== 'completed') return false
    return true
  }, 30_000)
  t.pass(`${afterIds.size} events accepted after the restart completed on the worker that was running before the kill`)

  const recoveryMs = firstAcceptedAfterRestart - restartedAt
  const stillActive = await main.getActiveCount()
  t.comment(`202 before the kill ${byPhase('before').filter((a) => a.status === 202).length} (${waitingAtKill.length} not yet run); ` +
    `sent before redis-server had exited and answered 503: ${[...byPhase('before'), ...byPhase('killing')].filter((a) => a.status === 503).length}; ` +
    `outage: 503 ${outage.filter((a) => a.status === 503).length} in ${restartedAt - killedAt} ms; ` +
    `while restarting: 503 ${byPhase('restarting').filter((a) => a.status === 503).length}; ` +
    `first 202 ${recoveryMs} ms after the restart began; jobs still active (left by the kill, back after the stall timeout) ${stillActive}`)
  t.equal(await worker.stop('SIGTERM'), 0)
  t.equal(await server.stop('SIGTERM'), 0)
})
