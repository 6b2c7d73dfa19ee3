/**
 * Exactly once on the journal's PostgreSQL queue (ANVIL_JOURNAL_QUEUE=postgres, issue 35 contract 3): events
 * queued in `webhook_event_queue`, drained by `anvil worker` processes SIGKILLed by pid at random points (in
 * handlers, commits, claims, deletes), short leases, restarted each time. Each event's `event.db` INSERT is
 * applied exactly once and it has exactly one `done` attempt; a row taken back past the stall limit is `dead`,
 * applied once if a run of it committed, else not at all. Every other handler only calls `once` (group commit).
 */
import t from 'tap'
import { journalFixture } from '../helpers/journal.js'
import { assertAppliedOnce, count, doneRows, killDuringDrain } from '../helpers/journal-kills.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'
import { PgEventQueue } from '../../src/queue/pg-event-queue.js'
import { DEFAULT_QUEUE_SETTINGS } from '../../src/queue/queue-settings.js'

const EVENTS = 200
const KILLS = 3
t.setTimeout(240_000)

const { redis, db } = journalFixture(t)
beforeStep(t, async () => { await db.query('CREATE TABLE public.effects (event_id text NOT NULL, pid integer NOT NULL)') })

for (const groupCommit of [undefined, '8,20']) t.test(`${EVENTS} events on the PostgreSQL queue, ${KILLS} SIGKILLs of anvil worker${groupCommit === undefined ? '' : `, group commit ${groupCommit}`}: each applied once, one done attempt each`, async (t) => {
  await db.query('TRUNCATE anvil.webhook_events, anvil.webhook_event_failures, anvil.webhook_effects, anvil.webhook_event_queue, public.effects')
  const queue = new PgEventQueue(db.url, { ...DEFAULT_QUEUE_SETTINGS, retrySchedule: [100, 100] })
  t.teardown(async () => { await queue.close() })
  const ids = Array.from({ length: EVENTS }, (_, i) => `evt_${i}`)
  await Promise.all(ids.map(async (eventId) => await queue.enqueue({
    source: 'stripe', provider: 'stripe', key: `stripe:${eventId}`, eventId, eventType: 'invoice.paid', payload: Buffer.from(`{"id":"${eventId}"}`),
    contentType: 'application/json', headers: {}, receivedAt: Date.now()
  })))
  t.equal(await count(db, 'SELECT count(*) AS n FROM anvil.webhook_event_queue'), EVENTS, 'every event queued in PostgreSQL')

  const env = {
    REDIS_URL: redis.url, ANVIL_QUEUE: 'faults-journal-queue', ANVIL_DATABASE_URL: db.url, ANVIL_JOURNAL_QUEUE: 'postgres', ANVIL_WORKER_ROLE: 'inbound',
    HOST: '127.0.0.1', PORT: '0', WORKER_CONCURRENCY: '16', ANVIL_LOCK_DURATION_MS: '1000', HANDLER_DELAY_MS: '40',
    ...(groupCommit === undefined ? {} : { ANVIL_JOURNAL_GROUP_COMMIT: groupCommit, HANDLER_MODE: 'mixed' })
  }
  // Left by a kill: rows begun and not finished; with no worker running, the dead one's (a lease's expiry is a matter of time).
  const { last, left } = await killDuringDrain(t, {
    db, env, events: EVENTS, kills: KILLS, left: async () => await count(db, 'SELECT count(*) AS n FROM anvil.webhook_event_queue WHERE attempts_started > attempts_made')
  })
  t.ok(left.every((n) => n > 0), `every kill left rows begun and not finished (${left.join(', ')})`)

  await eventually('the queue to drain', async () => await count(db, 'SELECT count(*) AS n FROM anvil.webhook_event_queue') === 0, 40_000)

  const dead = await db.query<{ id: string, error_class: string }>("SELECT id, error_class FROM anvil.webhook_events WHERE status <> 'done'")
  t.same(dead.filter((row) => row.error_class !== 'stalled'), [], 'no event failed but by the stall limit')
  const done = await doneRows(db)
  const ended = new Set((await db.query<{ id: string }>('SELECT id FROM anvil.webhook_events')).map((row) => row.id))
  t.same(ids.filter((id) => !ended.has(id)), [], `every event done (${done}) or stalled out (${dead.length})`)
  await assertAppliedOnce(t, db)
  t.equal(await last.stop('SIGTERM'), 0, 'the last worker stops cleanly')
})
