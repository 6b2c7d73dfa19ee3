// What each of the journal's writes costs PostgreSQL, one statement shape at a time: one client, N events per
// line, the backend's CPU from /proc (so only on Linux, with PostgreSQL on this machine; ANVIL_BENCH_PG_URL).
// The profile behind bench/journal.mjs's ratios: the one-commit floor, the handler's transaction as the journal sends it
// (src/journal/effect-scope.ts), and the variants that were weighed against it. Makes and drops a database.
//
//   node bench/journal-statements.mjs [--events 3000] [--runs 3] [--quick]
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { migrate } from '../dist/src/db/migrate.js'
import * as effects from '../dist/src/sql/webhook_effects.js'
import { markDone } from '../dist/src/sql/webhook_event_done.js'
import { benchArgs, benchDatabase, emitSection, showSpread, spread } from './lib.mjs'

const values = benchArgs({ events: { type: 'string', default: '3000' }, runs: { type: 'string', default: '3' } })
const N = values.quick ? 200 : Number(values.events)
const RUNS = values.quick ? 1 : Number(values.runs)
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

/** Events as the worker's start write leaves them: a 2 KB row, `processing`. */
async function seed (prefix) {
  for (let i = 0; i < N; i += 500) {
    const ids = Array.from({ length: Math.min(500, N - i) }, (_, k) => `${prefix}${i + k}`)
    await c.query(`INSERT INTO ${S}.webhook_events (id, source, dedupe_key, payload, payload_json, received_at, status, job_id)
      SELECT id, 'stripe', id, convert_to(repeat('x', 1000), 'UTF8'), jsonb_build_object('a', repeat('y', 900)), now(), 'processing', id
      FROM unnest($1::text[]) id`, [ids])
  }
}

const lit = pg.escapeLiteral
const mark = (id) => markDone(S, { eventId: id, jobId: id, attempt: 1, startedAt: new Date() })
/** Each line: what one event sends, in its round trips. */
const LINES = {
  'the floor: one autocommitted INSERT of the effect': async (id) => {
    await c.query(`INSERT INTO bench_effects (id, data) VALUES (${lit(id)}, '{"ok":true}')`)
  },
  'the journal\'s transaction: once() (savepoint, claim, result) and the done mark, two round trips': async (id) => {
    const key = `${id}:record`
    await c.query(['BEGIN', 'SAVEPOINT anvil_once_1', effects.claim(S, key, id, 'record')].join('; '))
    await c.query([effects.storeResult(S, key, '{"ok":true}'), 'RELEASE SAVEPOINT anvil_once_1', mark(id), 'COMMIT'].join('; '))
  },
  'the same without the savepoint': async (id) => {
    const key = `${id}:record`
    await c.query(['BEGIN', effects.claim(S, key, id, 'record')].join('; '))
    await c.query([effects.storeResult(S, key, '{"ok":true}'), mark(id), 'COMMIT'].join('; '))
  },
  'the same without the result\'s UPDATE': async (id) => {
    const key = `${id}:record`
    await c.query(['BEGIN', 'SAVEPOINT anvil_once_1', effects.claim(S, key, id, 'record')].join('; '))
    await c.query(['RELEASE SAVEPOINT anvil_once_1', mark(id), 'COMMIT'].join('; '))
  },
  'the done mark alone in a transaction (a handler that uses db only, with no write)': async (id) => {
    await c.query(['BEGIN', mark(id), 'COMMIT'].join('; '))
  },
  'the journal\'s transaction through two PL/pgSQL functions (cached plans)': async (id) => {
    const key = `${id}:record`
    await c.query(`BEGIN; SAVEPOINT anvil_once_1; SELECT bench_claim(${lit(key)}, ${lit(id)}, 'record')`)
    await c.query(`SELECT bench_finish(${lit(key)}, '{"ok":true}', ${lit(id)}, ${lit(id)}, 1, now()); RELEASE SAVEPOINT anvil_once_1; COMMIT`)
  }
}
const NO_FK = 'the journal\'s transaction, without the foreign keys to the event\'s row'

try {
  await c.connect()
  await migrate(url.toString())
  pid = (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
  await c.query('CREATE TABLE bench_effects (id text PRIMARY KEY, data jsonb)')
  await c.query(`CREATE FUNCTION bench_claim (k text, e text, a text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO ${S}.webhook_effects (key, event_id, action) VALUES (k, e, a) ON CONFLICT (key) DO NOTHING; RETURN FOUND; END $$`)
  await c.query(`CREATE FUNCTION bench_finish (k text, r jsonb, e text, j text, att int, s timestamptz) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN UPDATE ${S}.webhook_effects SET result = r WHERE key = k;
      INSERT INTO ${S}.webhook_event_done (event_id, job_id, attempt, started_at) VALUES (e, j, att, s); END $$`)
  const results = Object.fromEntries([...Object.keys(LINES), NO_FK].map((line) => [line, { cpu: [], wall: [] }]))
  let n = 0
  const measure = async (line, send) => {
    const prefix = `r${n++}:`
    await seed(prefix)
    await c.query('CHECKPOINT')
    const cpu0 = cpu()
    const wall0 = performance.now()
    for (let i = 0; i < N; i++) await send(`${prefix}${i}`)
    results[line].cpu.push((cpu() - cpu0) / N * 1e6)
    results[line].wall.push((performance.now() - wall0) / N * 1000)
  }
  for (let run = 0; run < RUNS; run++) {
    for (const [line, send] of Object.entries(LINES)) await measure(line, send)
  }
  await c.query(`ALTER TABLE ${S}.webhook_effects DROP CONSTRAINT webhook_effects_event_id_fkey;
    ALTER TABLE ${S}.webhook_event_done DROP CONSTRAINT webhook_event_done_event_id_fkey`)
  for (let run = 0; run < RUNS; run++) await measure(NO_FK, LINES['the journal\'s transaction: once() (savepoint, claim, result) and the done mark, two round trips'])
  const markdown = [
    `One client, ${N} events a line, ${RUNS} run(s), median [min–max]; the backend's CPU from /proc (10 ms ticks), µs per event.`, '',
    '| what one event sends | backend CPU µs | wall µs |', '|---|---|---|',
    ...Object.entries(results).map(([line, r]) => `| ${line} | ${showSpread(spread(r.cpu))} | ${showSpread(spread(r.wall))} |`)
  ]
  emitSection({ id: 'journal-statements', title: 'The journal\'s statements, one at a time', markdown, data: results }, values)
} finally {
  await c.end().catch(() => {})
  await database.drop()
}
