/**
 * The journal's exactly once for writes through `event.db`: `anvil worker` processes (the handler module,
 * test/fixtures/journal-insert-handler.mjs, does one bare INSERT per event) SIGKILLed by pid at random points
 * of a drain, with short locks, and restarted each time. Every event's INSERT is applied exactly once and
 * every event has exactly one `done` attempt, whatever the kills and stalls did to the jobs.
 */
import t from 'tap'
import { JOB_NAME } from '../src/shared/constants.js'
import { BACKOFF_TYPE } from '../src/queue/retry.js'
import { waitFor } from './helpers/chain.js'
import { startCli, type Cli } from './helpers/cli.js'
import { jobData, journalFixture, openQueue } from './helpers/journal.js'

const EVENTS = 400
const KILLS = 4

const { redis, db } = await journalFixture(t)
await db.query('CREATE TABLE public.effects (event_id text NOT NULL, pid integer NOT NULL)')

const count = async (sql: string): Promise<number> => Number((await db.query<{ n: string }>(sql))[0]?.n)
const doneRows = async (): Promise<number> => await count("SELECT count(*) AS n FROM anvil.webhook_events WHERE status = 'done'")

t.test(`${EVENTS} events, ${KILLS} SIGKILLs of anvil worker mid-drain: each event's event.db INSERT applied once, one done attempt each`, async (t) => {
  const queueName = 'faults-journal-once'
  const queue = openQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  const jobs = Array.from({ length: EVENTS }, (_, i) => {
    const data = jobData({ eventId: `evt_${i}`, retry: [100, 100] })
    return { name: JOB_NAME, data, opts: { jobId: `e_${i}`, attempts: 3, backoff: { type: BACKOFF_TYPE } } }
  })
  await queue.addBulk(jobs)

  const env = {
    REDIS_URL: redis.url, ANVIL_QUEUE: queueName, ANVIL_DATABASE_URL: db.url, ANVIL_WORKER_ROLE: 'inbound', HOST: '127.0.0.1', PORT: '0',
    WORKER_CONCURRENCY: '16', ANVIL_LOCK_DURATION_MS: '1000', ANVIL_STALLED_INTERVAL_MS: '300', HANDLER_DELAY_MS: '40'
  }
  const start = (): Cli => startCli(t, ['worker', '--handler', 'test/fixtures/journal-insert-handler.mjs'], { env })

  // Two workers at a time, so a restart's start-up overlaps the other's drain: each kill takes the older one,
  // at a random point, and a new one starts in its place.
  const began = Date.now()
  const workers = [start(), start()]
  let leftActive: string[] = []
  const killedActive: number[] = []
  for (let kill = 0; kill < KILLS; kill++) {
    const victim = workers.shift() as Cli
    await victim.log('anvil worker: started')
    // The jobs the last kill left active are taken back first; a second stall would fail them for good, so
    // the next kill waits until they have run.
    const stalled = leftActive
    await waitFor('the jobs the last kill left active to run again', async () => {
      const states = await Promise.all(stalled.map(async (id) => await queue.getJobState(id)))
      return states.every((state) => state === 'completed' || state === 'failed')
    }, 30_000)
    // A random point in this kill's share of the drain (whatever the machine's speed), inside handlers,
    // commits or completions.
    const target = Math.floor(EVENTS * (kill + 0.3 + 0.5 * Math.random()) / (KILLS + 1))
    await waitFor('the drain to go on', async () => await doneRows() >= target, 30_000)
    victim.child.kill('SIGKILL')
    await victim.exited
    leftActive = (await queue.getActive()).map((job) => job.id as string)
    killedActive.push(leftActive.length)
    t.comment(`kill ${kill + 1} at ${Date.now() - began} ms, ${await doneRows()} done, ${leftActive.length} active`)
    workers.push(start())
  }
  t.ok(killedActive.every((n) => n > 0), `every kill left jobs active (${killedActive.join(', ')})`)

  await waitFor('the queue to drain', async () => {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
    return Object.values(counts).every((n) => n === 0) && await doneRows() === EVENTS
  }, 40_000)
  t.comment(`drained at ${Date.now() - began} ms`)
  t.equal(await count('SELECT count(*) AS n FROM public.effects'), EVENTS, `${EVENTS} effect rows for ${EVENTS} events`)
  t.same(await db.query('SELECT event_id, count(*)::int AS n FROM public.effects GROUP BY event_id HAVING count(*) <> 1 ORDER BY event_id'), [],
    'no event applied twice')
  t.same(await db.query(`SELECT event_id, count(*)::int AS n FROM anvil.webhook_event_attempts WHERE status = 'done'
    GROUP BY event_id HAVING count(*) <> 1 ORDER BY event_id`), [], 'one done attempt per event')
  t.equal(await count("SELECT count(DISTINCT event_id) AS n FROM anvil.webhook_event_attempts WHERE status = 'done'"), EVENTS, 'every event has its done attempt')
  t.equal(await queue.getFailedCount(), 0, 'no job failed')
  for (const worker of workers) {
    await worker.log('anvil worker: started')
    t.equal(await worker.stop('SIGTERM'), 0, 'a worker left stops cleanly')
  }
})
