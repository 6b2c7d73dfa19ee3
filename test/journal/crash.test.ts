/**
 * A worker SIGKILLed mid-handler leaves no row (the row is written once, with the outcome: until then the event
 * is its job in Redis), and the worker that takes the stalled job back runs it: the row says `done`.
 * The dying worker is test/fixtures/worker-process.mjs (from dist/: run `npm run build` first).
 */
import t from 'tap'
import { join } from 'node:path'

import { tempDir } from '../helpers/cli.js'
import { addJob, jobData, openQueue, journalFixture } from '../helpers/journal.js'
import { startScript } from '../fixtures/script.js'
import { createWorker } from '../../src/worker/worker.js'
import { readFileSync } from 'node:fs'
import { eventually } from '../helpers/eventually.js'

const { redis, db } = journalFixture(t)

const statusOf = async (id: string): Promise<string | undefined> =>
  (await db.query<{ status: string }>('SELECT status FROM anvil.webhook_events WHERE id = $1', [id]))[0]?.status

t.test('SIGKILL mid-handler leaves no row; the rerun on another worker writes it done', async (t) => {
  const queueName = 'journal-crash'
  const queue = openQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  const jobId = await addJob(queue, jobData({ eventId: 'evt_crash' }))
  const log = join(tempDir(t), 'first.jsonl')
  const first = startScript(t, 'worker-process.mjs', {
    REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HANDLER_LOG: log, FIXTURE_MODE: 'hang', JOURNAL_DATABASE_URL: db.url,
    LOCK_DURATION_MS: '1000', STALLED_INTERVAL_MS: '500', SWEEP_INTERVAL_MS: '0'
  })
  await first.log('fixture worker: started')
  await eventually('the handler to start', () => readFileSync(log, { flag: 'a+' }).toString().includes(jobId), 30_000)
  t.equal(await statusOf('evt_crash'), undefined, 'no row while the handler runs')
  t.equal(await first.kill('SIGKILL'), 'SIGKILL')
  t.equal(await statusOf('evt_crash'), undefined, 'the dead worker leaves none')

  const ran: string[] = []
  const second = createWorker((event) => { ran.push(event.id) }, {
    redis: redis.url, queueName, sweepIntervalMs: 0, stalledIntervalMs: 500, journal: { database: db.url }
  })
  t.teardown(() => second.close())
  await second.start()
  await eventually('the row to be done', async () => await statusOf('evt_crash') === 'done', 30_000)
  t.same(ran, [jobId], 'the second worker ran the same job')
})
