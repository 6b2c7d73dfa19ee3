/**
 * The journal's exactly-once fault tests (test/faults/journal-once.test.ts on BullMQ, journal-queue-once.test.ts
 * on the PostgreSQL queue): `anvil worker` processes running test/fixtures/journal-insert-handler.mjs, each
 * SIGKILLed by pid at a random point of its share of a drain, then a last one that drains the rest; and the counts
 * that prove each event's effect applied once.
 */
import type { Test } from 'tap'
import { startCli, type Cli } from './cli.js'
import { eventually } from './eventually.js'
import type { TestDatabase } from './pg.js'

export const count = async (db: TestDatabase, sql: string): Promise<number> => Number((await db.query<{ n: string }>(sql))[0]?.n)
export const doneRows = async (db: TestDatabase): Promise<number> =>
  await count(db, "SELECT count(*) AS n FROM anvil.webhook_events WHERE status = 'done'")

/**
 * `kills` workers in turn, each SIGKILLed once the drain of `events` passes a random point of its share (whatever the
 * machine's speed): inside handlers, commits or completions. `left()` counts what the dead one left in flight, read
 * with no worker running. Returns those counts and the last worker, started to drain the rest.
 */
export async function killDuringDrain (t: Test, options: {
  db: TestDatabase, env: Record<string, string>, events: number, kills: number, left: () => Promise<number>
}): Promise<{ last: Cli, left: number[] }> {
  const { db, env, events, kills } = options
  const start = (): Cli => startCli(t, ['worker', '--handler', 'test/fixtures/journal-insert-handler.mjs'], { env })
  const began = Date.now()
  const left: number[] = []
  for (let kill = 0; kill < kills; kill++) {
    const worker = start()
    await worker.log('anvil worker: started')
    const target = Math.floor(events * (kill + 0.3 + 0.5 * Math.random()) / (kills + 1))
    await eventually('the drain to go on', async () => await doneRows(db) >= target, 30_000)
    process.kill(worker.child.pid as number, 'SIGKILL')
    await worker.exited
    left.push(await options.left())
    t.comment(`kill ${kill + 1} at ${Date.now() - began} ms, ${await doneRows(db)} done, ${left.at(-1) ?? 0} left in flight`)
  }
  return { last: start(), left }
}

/** Each event done has its one effect (a bare INSERT or its `once` row) and one done attempt; no other event has any. */
export async function assertAppliedOnce (t: Test, db: TestDatabase): Promise<void> {
  const done = await doneRows(db)
  const effects = 'SELECT event_id FROM public.effects UNION ALL SELECT event_id FROM anvil.webhook_effects'
  t.equal(await count(db, `SELECT count(*) AS n FROM (${effects}) f`), done, `${done} effect rows for ${done} events done`)
  t.same(await db.query(`SELECT e.id, count(f.event_id)::int AS n FROM anvil.webhook_events e LEFT JOIN (${effects}) f ON f.event_id = e.id
    GROUP BY e.id, e.status HAVING count(f.event_id) <> (CASE WHEN e.status = 'done' THEN 1 ELSE 0 END) ORDER BY e.id`), [],
  'each event done applied once, no other applied at all')
  t.same(await db.query(`SELECT e.id, count(a.event_id)::int AS n FROM anvil.webhook_events e
    LEFT JOIN anvil.webhook_event_attempts a ON a.event_id = e.id AND a.status = 'done'
    GROUP BY e.id, e.status HAVING count(a.event_id) <> (CASE WHEN e.status = 'done' THEN 1 ELSE 0 END) ORDER BY e.id`), [],
  'one done attempt per event done')
}
