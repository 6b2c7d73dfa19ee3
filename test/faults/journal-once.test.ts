/**
 * The journal's exactly once for writes through `event.db`: `anvil worker` processes (the handler module,
 * test/fixtures/journal-insert-handler.mjs, does one bare INSERT per event) SIGKILLed by pid at random points
 * of a drain, with short locks, and restarted each time. Every event's INSERT is applied exactly once and
 * every event has exactly one `done` attempt, whatever the kills and stalls did to the jobs (a job that
 * passes BullMQ's stall limit fails for good: its event is applied once if a run of it committed, else not at all).
 * Run twice: a commit per event, then group commit (ANVIL_JOURNAL_GROUP_COMMIT), where a kill takes a whole
 * group's uncommitted handlers with it, and every other handler only calls `once` (its row and effect written
 * by the group's one statement: applied once, with its row, or not at all).
 */
import t from 'tap'
import { JOB_NAME, STALLED_MESSAGE } from '../../src/shared/constants.js'
import { BACKOFF_TYPE } from '../../src/queue/retry.js'

import { jobData, journalFixture, openQueue } from '../helpers/journal.js'
import { assertAppliedOnce, doneRows, killDuringDrain } from '../helpers/journal-kills.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

// Hundreds of events, as journal-queue-once drains (was 400: the kills, 4 per run, are what the contract needs).
const EVENTS = 200
const KILLS = 4
// Two drains of about a minute each on a loaded machine.
t.setTimeout(300_000)

const { redis, db } = journalFixture(t)
beforeStep(t, async () => { await db.query('CREATE TABLE public.effects (event_id text NOT NULL, pid integer NOT NULL)') })

for (const groupCommit of [undefined, '8,20']) t.test(`${EVENTS} events, ${KILLS} SIGKILLs of anvil worker mid-drain${groupCommit === undefined ? '' : `, group commit ${groupCommit}`}: each event's event.db INSERT applied once, one done attempt each`, async (t) => {
  await db.query('TRUNCATE anvil.webhook_events, anvil.webhook_event_failures, anvil.webhook_effects, public.effects')
  const queueName = `faults-journal-once${groupCommit === undefined ? '' : '-group'}`
  const queue = openQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  const jobs = Array.from({ length: EVENTS }, (_, i) => {
    const data = jobData({ eventId: `evt_${i}`, retry: [100, 100] })
    return { name: JOB_NAME, data, opts: { jobId: `e_${i}`, attempts: 3, backoff: { type: BACKOFF_TYPE } } }
  })
  await queue.addBulk(jobs)

  const env = {
    REDIS_URL: redis.url, ANVIL_QUEUE: queueName, ANVIL_DATABASE_URL: db.url, ANVIL_WORKER_ROLE: 'inbound', HOST: '127.0.0.1', PORT: '0',
    WORKER_CONCURRENCY: '16', ANVIL_LOCK_DURATION_MS: '1000', ANVIL_STALLED_INTERVAL_MS: '300', HANDLER_DELAY_MS: '40',
    // With group commit, every other handler only calls once(): its row and effect go in the group's statement.
    ...(groupCommit === undefined ? {} : { ANVIL_JOURNAL_GROUP_COMMIT: groupCommit, HANDLER_MODE: 'mixed' })
  }
  // Left by a kill: the dead worker's jobs, still active.
  const { last, left } = await killDuringDrain(t, { db, env, events: EVENTS, kills: KILLS, left: async () => (await queue.getActive()).length })
  t.ok(left.every((n) => n > 0), `every kill left jobs active (${left.join(', ')})`)

  await eventually('the queue to drain', async () => {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
    return Object.values(counts).every((n) => n === 0)
  }, 40_000)

  // A job in flight at two kills passes BullMQ's stall limit and fails for good (a dead letter): its event is
  // done if a run of it committed, else untouched. Every other event is done.
  const failed = await queue.getFailed()
  t.same(failed.filter((job) => job.failedReason !== STALLED_MESSAGE).map((job) => job.failedReason), [], 'no job failed but by the stall limit')
  const done = await doneRows(db)
  const ended = new Set([...failed.map((job) => job.data.eventId),
    ...(await db.query<{ id: string }>("SELECT id FROM anvil.webhook_events WHERE status = 'done'")).map((row) => row.id)])
  t.same(jobs.map((job) => job.data.eventId).filter((id) => !ended.has(id)), [], `every event done (${done}), or its job stalled out (${failed.length})`)
  await assertAppliedOnce(t, db)
  t.equal(await last.stop('SIGTERM'), 0, 'the last worker stops cleanly')
})
