// The delivery log's true cost, for bench/outbound-delivery.mjs: Anvil's delivery worker on its PostgreSQL store (and,
// for the engine's share, on a no-op store)
// (each attempt a `started` row before its POST and its outcome after, the endpoint and its secrets read from the
// database through the store's cache) against graphile-worker 0.17.3 doing the same signed POST of the same body to
// the same receiver, its job's completion its one durable write: a commit per job (its default), and batched
// (`localQueue` with `completeJobBatchDelay: 0`). CPU per delivery of node (this process), redis-server and the
// PostgreSQL backends of the bench's own database.
import pg from 'pg'
import { Logger, runMigrations } from 'graphile-worker'
import { Agent, request } from 'undici'
import { createDeliveryWorker, createOutbound, migrate } from '../dist/index.js'
import { outboundInternals } from '../dist/src/outbox/outbound.js'
import { signatureHeaders } from '../dist/src/send/sign-outbound.js'
import { deliveryJobOptions, resolveSchedule } from '../dist/src/delivery/delivery-schedule.js'
import { benchDatabase, completions, memoryDeliveryStore, postgresCpuSeconds, redisCpuSeconds } from './lib.mjs'
import { graphileDrain } from './graphile-side.mjs'

export const LOG_SIDES = { anvil: 'Anvil, delivery log off', 'anvil-log': 'Anvil, delivery log on', graphile: 'graphile-worker, a commit per job', 'graphile-batched': 'graphile-worker, batched' }
const noLog = new Logger(() => () => {})
const BODY_SQL = `json_build_object('id', 'msg_' || n, 'type', 'invoice.paid', 'timestamp', to_char(now() AT TIME ZONE 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'data', json_build_object('invoice', 'in_' || n, 'amount', 1000 + n, 'currency', 'eur'))::text`

/**
 * A database of its own, migrated for Anvil and graphile-worker, with `endpoints` endpoints to the receiver (their
 * secrets in PostgreSQL, where Anvil's store reads them). Pools of `poolSize`, each side's the same.
 */
export async function logSetup ({ redis, receiverUrl, endpoints, poolSize, prefix, queueName }) {
  const database = await benchDatabase('outbound')
  await migrate(database.url)
  // No idle timeout: a backend that ends mid-drain would take its CPU seconds out of the sum.
  const pool = new pg.Pool({ connectionString: database.url, max: poolSize, idleTimeoutMillis: 0 })
  pool.on('error', () => {})
  await runMigrations({ pgPool: pool, logger: noLog })
  const outbound = createOutbound({ database: pool, redis: redis.url, prefix, queueName })
  const made = []
  for (let e = 0; e < endpoints; e++) made.push(await outbound.endpoints.create({ url: `${receiverUrl}/ep_${e}` }))
  const secrets = new Map(made.map((endpoint) => [endpoint.id, endpoint.secret]))
  const store = outboundInternals(outbound).store
  const cpuNow = async () => {
    const usage = process.cpuUsage()
    return { node: (usage.user + usage.system) / 1e6, redis: await redisCpuSeconds(redis.client), ...await postgresCpuSeconds(pool, database.name) }
  }

  /** The outbox rows (dispatched) and the jobs their fan-out would have added, as the delivery worker finds them. */
  async function fillAnvil (queue, jobs, count) {
    await pool.query('TRUNCATE anvil.outbox, anvil.deliveries CASCADE')
    await pool.query(`INSERT INTO anvil.outbox (id, type, public_type, data, status, dispatched_at)
      SELECT 'msg_' || n, 'invoice.paid', 'invoice.paid', json_build_object('invoice', 'in_' || n)::text, 'dispatched', now() FROM generate_series(0, $1 - 1) AS n`, [jobs])
    const { rows } = await pool.query(`SELECT 'msg_' || n AS id, ${BODY_SQL} AS body FROM generate_series(0, $1 - 1) AS n`, [jobs])
    const options = { ...deliveryJobOptions(resolveSchedule()), removeOnComplete: true }
    for (let i = 0; i < jobs; i += 500) {
      await queue.addBulk(rows.slice(i, i + 500).map((row, k) => {
        const endpoint = made[(i + k) % count]
        return { name: 'deliver', data: { messageId: row.id, endpointId: endpoint.id, eventType: 'invoice.paid', url: endpoint.url, body: row.body, scheme: 'standard-webhooks' }, opts: options }
      }))
    }
  }

  async function fillGraphile (jobs, count) {
    await pool.query('DELETE FROM graphile_worker._private_jobs')
    await pool.query(`SELECT graphile_worker.add_job('deliver', json_build_object('messageId', 'msg_' || n, 'endpointId', ($2::text[])[n % $3 + 1],
        'url', ($4::text[])[n % $3 + 1], 'body', ${BODY_SQL}))
      FROM generate_series(0, $1 - 1) AS n`, [jobs, made.map((e) => e.id), count, made.map((e) => e.url)])
  }

  /** One drain of `side`; deliveries/s from the first completion to the last, CPU µs per delivery. */
  async function drain (side, { jobs, concurrency, queueName: name, giveUpMs }) {
    const clock = completions(jobs)
    let failed = 0
    let stop
    if (side === 'anvil' || side === 'anvil-log') {
      // Log off: the endpoint and its secret from memory and no attempt written, the engine alone beside the same jobs.
      const worker = createDeliveryWorker({ redis: redis.url, store: side === 'anvil' ? memoryDeliveryStore(made[0].secret) : store, queueName: name, prefix, concurrency, allowNets: '127.0.0.0/8' })
      worker.worker.on('completed', clock.tick)
      worker.worker.on('failed', () => { failed++ })
      await worker.start()
      stop = async () => await worker.close()
    } else {
      const own = new pg.Pool({ connectionString: database.url, max: poolSize, idleTimeoutMillis: 0 })
      own.on('error', () => {})
      const agent = new Agent()
      // The same POST Anvil sends: Standard Webhooks headers over the same body, the secret from memory.
      const deliver = async ({ messageId, endpointId, url, body }) => {
        const headers = signatureHeaders({ scheme: 'standard-webhooks', id: messageId, type: 'invoice.paid', timestamp: Math.floor(Date.now() / 1000), body, secrets: [secrets.get(endpointId)] })
        const response = await request(url, { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'anvil-webhooks' }, dispatcher: agent, headersTimeout: 30_000, bodyTimeout: 30_000 })
        await response.body.dump()
        if (response.statusCode >= 300) throw new Error(`HTTP ${response.statusCode}`)
      }
      // A failed job would be retried by graphile-worker later: the drain then gives up, which is the failure's report.
      const runner = await graphileDrain({ pool: own, concurrency, batched: side === 'graphile-batched', onDone: clock.tick, tasks: { deliver } })
      stop = async () => { await runner.stop(); await agent.close(); await own.end() }
    }
    const before = await cpuNow()
    let timer
    try {
      await Promise.race([clock.finished, new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`outbound log: ${side} completed ${clock.count} of ${jobs}`)), giveUpMs) })])
    } finally {
      clearTimeout(timer)
    }
    const after = await cpuNow()
    await stop()
    if (failed > 0) throw new Error(`outbound log: ${failed} deliveries failed on ${side}`)
    if (side === 'anvil-log') {
      const { rows } = await pool.query("SELECT count(*) FILTER (WHERE status = 'success') AS ok FROM anvil.deliveries")
      if (Number(rows[0].ok) !== jobs) throw new Error(`outbound log: ${rows[0].ok} successes logged of ${jobs}`)
    }
    const cpu = Object.fromEntries(['node', 'redis', 'pg'].map((k) => [k, (after[k] - before[k]) / jobs * 1e6]))
    return { rate: clock.rate(), cpu: { ...cpu, total: cpu.node + cpu.redis + cpu.pg } }
  }

  return {
    fill: async (side, queue, jobs, count) => side.startsWith('anvil') ? await fillAnvil(queue, jobs, count) : await fillGraphile(jobs, count),
    drain,
    async close () {
      await outbound.close()
      await pool.end()
      await database.drop()
    }
  }
}
