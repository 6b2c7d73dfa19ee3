// graphile-worker 0.17.3 (a devDependency of the bench only) as a side of bench/journal.mjs: the peer a user
// would pick for durable jobs on PostgreSQL. The same jobs (about 1 KB of JSON each), the same concurrency, the
// same work: one effect row, here written by the task through its client (autocommitted, as a graphile-worker
// task writes; the job's completion is graphile-worker's own statement). Two modes: a commit per job's
// completion (its default), and batched (`localQueue` with `completeJobBatchDelay: 0`, its batching).
import { EventEmitter } from 'node:events'
import { Logger, run, runMigrations } from 'graphile-worker'

/** Installs graphile-worker's schema in the bench database. */
export async function graphileSetup (pool) {
  await runMigrations({ pgPool: pool, logger: noLog })
}

const noLog = new Logger(() => () => {})

/** Empties its queue and adds `jobs` jobs in one statement. */
export async function graphileFill (pool, jobs) {
  await pool.query('DELETE FROM graphile_worker._private_jobs')
  await pool.query(`SELECT graphile_worker.add_job('record', json_build_object('id', 'evt_' || n, 'type', 'invoice.paid',
    'data', json_build_object('object', json_build_object('amount', n, 'currency', 'eur', 'lines', repeat('x', 800)))))
    FROM generate_series(0, $1 - 1) AS n`, [jobs])
}

/** Drains the queue at `concurrency`; `onDone(n)` is called at each job's success. `tasks`: another task list. */
export async function graphileDrain ({ pool, concurrency, batched, onDone, tasks }) {
  const events = new EventEmitter()
  let done = 0
  events.on('job:success', () => onDone(++done))
  const runner = await run({
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: noLog,
    events,
    taskList: tasks ?? {
      record: async (payload, helpers) => {
        await helpers.query('INSERT INTO bench_effects (key, result) VALUES ($1, $2)', [`${payload.id}:record`, { ok: true }])
      }
    },
    ...(batched ? { preset: { worker: { localQueue: { size: concurrency * 2 }, completeJobBatchDelay: 0 } } } : {})
  })
  return { stop: async () => await runner.stop() }
}
