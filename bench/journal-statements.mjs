// What each of the journal's writes costs PostgreSQL, one statement shape at a time: one client, N events per
// line, the backend's CPU from /proc (so only on Linux, with PostgreSQL on this machine; ANVIL_BENCH_PG_URL) and
// the WAL each event writes. The profile behind bench/journal.mjs's ratios: the one-commit floor, the handler's
// transaction as the journal sends it (src/journal/effect-scope.ts: the row written once, done, with the effect),
// and the variants weighed against it. Makes and drops a database.
//
//   node bench/journal-statements.mjs [--events 3000] [--runs 3] [--quick]
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { migrate } from '../dist/src/db/migrate.js'
import * as effects from '../dist/src/sql/webhook-effects.js'
import { finishOne, finishValues, record, recordChecked, recordValues } from '../dist/src/sql/webhook-event-outcome.js'
import { execute } from '../dist/src/db/session-statement.js'
import { outcomeRow } from '../dist/src/journal/journal-writer.js'
import { benchArgs, benchDatabase, emitSection, showSpread, spread } from './lib.mjs'

const values = benchArgs({ events: { type: 'string', default: '3000' }, runs: { type: 'string', default: '3' } })
const N = values.quick ? 50 : Number(values.events)
const RUNS = values.quick ? 1 : Number(values.runs)
const BATCH = 50
const S = 'anvil'
const database = await benchDatabase('statements')
const url = database.url
const c = new pg.Client({ connectionString: url })

/** The backend's CPU seconds (utime + stime, in clock ticks of 10 ms). */
let pid
const cpu = () => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}
const wal = async () => (await c.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn
const walBytes = async (from) => Number((await c.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS n', [from])).rows[0].n)

/** An event as the worker has it: the job's data (about 1 KB of JSON, headers, a signature). */
const body = JSON.stringify({ id: 'evt', type: 'invoice.paid', data: { object: { amount: 1, currency: 'eur', lines: 'x'.repeat(800) } } })
const data = (id) => ({
  v: 1, source: 'stripe', provider: 'stripe', eventType: 'invoice.paid', eventId: id, key: `k_${id}`, payload: Buffer.from(body).toString('base64'),
  contentType: 'application/json', signature: 't=1,v1=abc', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=abc', 'user-agent': 'Stripe/1.0' },
  receivedAt: Date.now(), retry: [1000], requestId: `req_${id}`
})
const done = (id) => outcomeRow({ id, jobId: `e_${id}`, attempt: 1, status: 'done', startedAt: new Date(), data: data(id) })
/** The row written done, as the handler's transaction writes it (a prepared statement). */
const row = async (id) => { await c.query({ name: 'record_one', text: recordChecked(S), values: recordValues([done(id)]) }) }
/** The effect's claim as the journal sends it: EXECUTE of a statement PREPAREd on the connection. */
const claim = (key, id) => execute(c, effects.claim(S), [key, id, 'record'])

/** Each line: what one event sends, in its round trips (a batch line sends BATCH events per call). */
const LINES = {
  'the floor: one autocommitted INSERT of the effect': async (id) => {
    await c.query(`INSERT INTO bench_effects (id, data) VALUES (${pg.escapeLiteral(id)}, '{"ok":true}')`)
  },
  'the journal\'s transaction: once() (the claim EXECUTEd; no savepoint, as it opens the transaction), then the row and the result EXECUTEd with the COMMIT: two round trips, one commit': async (id) => {
    const key = `${id}:record`
    await c.query(['BEGIN', claim(key, id)].join('; '))
    await c.query([execute(c, finishOne(S), finishValues(done(id), { key, json: '{"ok":true}' })), 'COMMIT'].join('; '))
  },
  'the same with a savepoint around the claim (a once() after the handler\'s own writes)': async (id) => {
    const key = `${id}:record`
    await c.query(['BEGIN', 'SAVEPOINT anvil_once_1', claim(key, id)].join('; '))
    await c.query([execute(c, finishOne(S), finishValues(done(id), { key, json: '{"ok":true}' })), 'COMMIT'].join('; '))
  },
  'the transaction before (commit cee97d1): once() (savepoint, the claim inlined), the row prepared, the result, the release and the commit: three round trips, one commit': async (id) => {
    const key = `${id}:record`
    await c.query(['BEGIN', 'SAVEPOINT anvil_once_1', `INSERT INTO ${S}.webhook_effects (key, event_id, action) VALUES (${pg.escapeLiteral(key)}, ${pg.escapeLiteral(id)}, 'record') ON CONFLICT (key) DO NOTHING RETURNING key`].join('; '))
    await row(id)
    await c.query([effects.storeResult(S, key, '{"ok":true}'), 'RELEASE SAVEPOINT anvil_once_1', 'COMMIT'].join('; '))
  },
  'the same with the result in the claim (no UPDATE: the effect written once too)': async (id) => {
    const key = `${id}:record`
    await c.query(['BEGIN', `INSERT INTO ${S}.webhook_effects (key, event_id, action, result) VALUES (${pg.escapeLiteral(key)}, ${pg.escapeLiteral(id)}, 'record', '{"ok":true}') ON CONFLICT (key) DO NOTHING`].join('; '))
    await row(id)
    await c.query('COMMIT')
  },
  'the row alone, written done and autocommitted (a handler that began no transaction)': async (id) => {
    await row(id)
  },
  [`the rows batched, ${BATCH} outcomes in one statement (the worker's batched write, per event)`]: async (id, i) => {
    if (i % BATCH !== 0) return
    const ids = Array.from({ length: BATCH }, (_, k) => `${id}_${k}`)
    await c.query({ name: 'record', text: record(S), values: recordValues(ids.map(done)) })
  }
}

try {
  await c.connect()
  await migrate(url.toString())
  pid = (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
  await c.query('CREATE TABLE bench_effects (id text PRIMARY KEY, data jsonb)')
  const results = Object.fromEntries(Object.keys(LINES).map((line) => [line, { cpu: [], wall: [], wal: [] }]))
  let n = 0
  for (let run = 0; run < RUNS; run++) {
    for (const [line, send] of Object.entries(LINES)) {
      const prefix = `r${n++}:`
      // A CHECKPOINT writes every dirty page of the server, other databases' too: a quick run, whose figures mean
      // nothing, takes one, to show the statement runs.
      if (!values.quick || n === 1) await c.query('CHECKPOINT')
      const lsn = await wal()
      const cpu0 = cpu()
      const wall0 = performance.now()
      for (let i = 0; i < N; i++) await send(`${prefix}${i}`, i)
      results[line].cpu.push((cpu() - cpu0) / N * 1e6)
      results[line].wall.push((performance.now() - wall0) / N * 1000)
      results[line].wal.push(await walBytes(lsn) / N)
    }
  }
  const markdown = [
    `One client, ${N} events a line, ${RUNS} run(s), median [min–max]; the backend's CPU from /proc (10 ms ticks), µs per event; WAL bytes per event (after a CHECKPOINT, so full-page images count as they would).`, '',
    '| what one event sends | backend CPU µs | wall µs | WAL bytes |', '|---|---|---|---|',
    ...Object.entries(results).map(([line, r]) => `| ${line} | ${showSpread(spread(r.cpu))} | ${showSpread(spread(r.wall))} | ${showSpread(spread(r.wal))} |`)
  ]
  emitSection({ id: 'journal-statements', title: 'The journal\'s statements, one at a time', markdown, data: results }, values)
} finally {
  await c.end().catch(() => {})
  await database.drop()
}
