/**
 * Bad input to the admin API is a 4xx `{ error, code }` with a one-line reason, never a 500: each bad input is
 * sent to every route it applies to (outbound, journal on PostgreSQL, journal on the dead letters in Redis,
 * session), over real HTTP into a real PostgreSQL and Redis. A database that is gone is a 503.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import { journalAdminRoutes } from '../../plugins/journal/admin-routes.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { migrate } from '../../src/db/migrate.js'
import { encodeCursor } from '../../src/paging/cursor.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const TOKEN = 'admin-token-bad-input-0123'
const auth = { authorization: `Bearer ${TOKEN}` }
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())

async function adminApp (database: TestDatabase, journal: 'pg' | 'redis'): Promise<FastifyInstance> {
  const app = Fastify()
  app.addHook('onError', async (_request, _reply, error) => { if (process.env.DEBUG_ADMIN !== undefined) console.error(error) })
  await app.register(anvilOutbound, { database: database.url, redis: redis.url })
  const log = openEventLog({ redis: redis.url, queueName: 'bad-input', ...(journal === 'pg' ? { database: database.url } : {}) })
  await app.register(anvilAdmin, { token: TOKEN, routes: [journalAdminRoutes(log)] })
  await app.ready()
  t.teardown(async () => await app.close())
  return app
}

const NUL = 'a\u0000b'
const nul = encodeURIComponent(NUL)
const cursors = [encodeCursor(['x', 'y']), encodeCursor([1.5]), encodeCursor([1e20]), encodeCursor([-1])]

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
interface Case { method: Method, url: string, payload?: unknown, journal?: boolean }
const get = (url: string, journal = false): Case => ({ method: 'GET', url, journal })

/** Each bad input, on each route it applies to. */
const CASES: Record<string, Case[]> = {
  'a NUL byte in a filter': [
    ...['provider', 'source', 'type', 'errorClass', 'text', 'status', 'since', 'until'].map((field) => get(`/admin/events?${field}=${nul}`, true)),
    { method: 'POST', url: '/admin/events/replay', payload: { filter: { source: NUL }, dryRun: true }, journal: true },
    { method: 'POST', url: '/admin/events/replay', payload: { filter: { text: NUL } }, journal: true },
    get(`/admin/endpoints?tenant=${nul}`), get(`/admin/deliveries?endpoint=${nul}`), get(`/admin/undelivered?endpoint=${nul}`),
    get(`/admin/deliveries?since=${nul}`)
  ],
  'a NUL byte in an id': [
    get(`/admin/events/${nul}`, true), { method: 'POST', url: `/admin/events/${nul}/replay`, journal: true },
    get(`/admin/events/replay/${nul}`, true), { method: 'DELETE', url: `/admin/events/replay/${nul}`, journal: true },
    { method: 'POST', url: `/admin/events/replay/${nul}/resume`, journal: true },
    get(`/admin/endpoints/${nul}`), { method: 'PATCH', url: `/admin/endpoints/${nul}`, payload: { description: 'x' } },
    { method: 'DELETE', url: `/admin/endpoints/${nul}` }, { method: 'POST', url: `/admin/endpoints/${nul}/rotate-secret`, payload: {} },
    { method: 'POST', url: `/admin/endpoints/${nul}/test`, payload: {} },
    { method: 'POST', url: `/admin/endpoints/${nul}/recover`, payload: { since: '2026-01-01T00:00:00Z' } },
    get(`/admin/messages/${nul}`), { method: 'POST', url: `/admin/deliveries/${nul}/retry` }
  ],
  'a NUL byte in a tenant or a description': [
    { method: 'POST', url: '/admin/endpoints', payload: { url: 'https://example.com/hook', tenant: NUL } },
    { method: 'POST', url: '/admin/endpoints', payload: { url: 'https://example.com/hook', description: NUL } },
    { method: 'POST', url: '/admin/endpoints', payload: { url: `https://example.com/${NUL}` } },
    { method: 'PATCH', url: '/admin/endpoints/ep_missing', payload: { tenant: NUL } },
    { method: 'POST', url: '/admin/messages', payload: { type: 'order.paid', tenant: NUL, data: {} } },
    { method: 'POST', url: '/admin/messages', payload: { type: 'order.paid', data: { note: NUL } } },
    { method: 'POST', url: '/admin/session', payload: { token: NUL } }
  ],
  'a time out of range': [
    get('/admin/events?since=99999999d', true), get('/admin/events?until=999999999w', true),
    get('/admin/events?since=0000-01-01', true), get('/admin/events?until=0000-01-01T00:00:00Z', true),
    { method: 'POST', url: '/admin/events/replay', payload: { filter: { since: '99999999d' }, dryRun: true }, journal: true },
    get('/admin/deliveries?since=0000-01-01'), get('/admin/deliveries?since=-271821-04-20'), get('/admin/deliveries?since=99999999d'),
    { method: 'POST', url: '/admin/endpoints/ep_missing/recover', payload: { since: '0000-01-01' } }
  ],
  'a cursor this list never gave out': cursors.flatMap((cursor) => [
    get(`/admin/events?cursor=${cursor}`, true), get(`/admin/dead-letters?cursor=${cursor}`, true),
    get(`/admin/endpoints?cursor=${cursor}`), get(`/admin/deliveries?cursor=${cursor}`), get(`/admin/undelivered?cursor=${cursor}`)
  ])
}

async function sendAll (t: Test, app: FastifyInstance, journalOnly = false): Promise<void> {
  for (const [input, cases] of Object.entries(CASES)) {
    for (const { method, url, payload, journal } of cases) {
      if (journalOnly && journal !== true) continue
      const res = await app.inject({ method, url, headers: auth, ...(payload === undefined ? {} : { payload: payload as object }) })
      const where = `${input}: ${method} ${url} ${payload === undefined ? '' : JSON.stringify(payload)}`
      t.ok(res.statusCode >= 400 && res.statusCode < 500, `${where} → ${res.statusCode} ${res.body}`)
      const body = res.json() as { error?: unknown, code?: unknown }
      t.match(body, { error: /^[^\n]+$/, code: /^ANVIL_ERR_/ }, `${where}: { error, code }, one line`)
      t.same(Object.keys(body).sort(), ['code', 'error'], `${where}: nothing else, no stack`)
    }
  }
}

t.test('every bad input is a 4xx { error, code } on every route it applies to, journal on PostgreSQL', async (t) => {
  await sendAll(t, await adminApp(db, 'pg'))
})

t.test('the journal routes on the dead letters in Redis (no database): the same 4xx', async (t) => {
  await sendAll(t, await adminApp(db, 'redis'), true)
})

t.test('a data exception PostgreSQL raises in any admin route (a check a route missed) is a 400 with its one line', async (t) => {
  const pool = db.pool(1)
  const app = Fastify()
  await app.register(anvilAdmin, {
    token: TOKEN,
    routes: [async (admin) => {
      admin.get('/cast', async (request) => (await pool.query('SELECT $1::timestamptz AS at', [(request.query as { at: string }).at])).rows)
    }]
  })
  t.teardown(async () => await app.close())
  const res = await app.inject({ url: '/admin/cast?at=2026-02-30', headers: auth })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'invalid input: date/time field value out of range: "2026-02-30"', code: 'ANVIL_ERR_BAD_REQUEST' })
})

t.test('the database gone: every admin route that needs it is 503 { error, code }, and the rest still answer', async (t) => {
  const doomed = await TestDatabase.create()
  await migrate(doomed.url)
  const app = await adminApp(doomed, 'pg')
  t.equal((await app.inject({ url: '/admin/endpoints', headers: auth })).statusCode, 200, 'up first')
  await doomed.drop({ wait: true })
  const needing: Case[] = [
    get('/admin/events', true), get('/admin/events/evt_1', true), { method: 'POST', url: '/admin/events/evt_1/replay' },
    { method: 'POST', url: '/admin/events/replay', payload: { dryRun: true } }, get('/admin/stats'), get('/admin/dead-letters'),
    get('/admin/endpoints'), get('/admin/endpoints/ep_1'), { method: 'POST', url: '/admin/endpoints', payload: { url: 'https://example.com/hook' } },
    { method: 'DELETE', url: '/admin/endpoints/ep_1' }, { method: 'POST', url: '/admin/messages', payload: { type: 'order.paid', data: {} } },
    get('/admin/messages/msg_1'), get('/admin/deliveries'), get('/admin/undelivered'), get('/admin/outbox')
  ]
  for (const { method, url, payload } of needing) {
    const res = await app.inject({ method, url, headers: auth, ...(payload === undefined ? {} : { payload: payload as object }) })
    t.equal(res.statusCode, 503, `${method} ${url} → ${res.statusCode} ${res.body}`)
    t.match(res.json(), { error: /^Database unavailable: [^\n]+$/, code: 'ANVIL_ERR_DATABASE_UNAVAILABLE' })
  }
  t.equal((await app.inject({ url: '/admin/session', headers: auth })).statusCode, 200, 'the session routes need no database')
  t.equal((await app.inject({ url: '/admin/openapi.json', headers: auth })).statusCode, 200)
})

t.test('an event whose payload is nested 5,000 deep: its page answers 200 with the payload as text', async (t) => {
  const { createWorker } = await import('../../src/worker/worker.js')
  const { addJob, jobData, openQueue } = await import('../helpers/journal.js')
  const { eventually } = await import('../helpers/eventually.js')
  const deep = '['.repeat(5000) + ']'.repeat(5000)
  const worker = createWorker(async () => {}, { redis: redis.url, queueName: 'deep', sweepIntervalMs: 0, journal: { database: db.url } })
  const queue = openQueue(redis.url, 'deep')
  t.teardown(async () => { await worker.close(); await queue.close() })
  await worker.start()
  await addJob(queue, jobData({ eventId: 'evt_deep', body: deep }))
  await eventually('journaled', async () => (await db.query("SELECT 1 FROM anvil.webhook_events WHERE id = 'evt_deep' AND status = 'done'")).length === 1)
  const app = await adminApp(db, 'pg')
  const res = await app.inject({ url: '/admin/events/evt_deep', headers: auth })
  t.equal(res.statusCode, 200, res.body.slice(0, 300))
  t.match(res.json(), { id: 'evt_deep', payload: deep, payloadEncoding: 'utf8' })
  t.equal(res.json().json, undefined, 'no JSON view: the bytes are the view')
  const shallow = '['.repeat(100) + ']'.repeat(100)
  await addJob(queue, jobData({ eventId: 'evt_100', body: shallow }))
  await eventually('journaled', async () => (await db.query("SELECT 1 FROM anvil.webhook_events WHERE id = 'evt_100' AND status = 'done'")).length === 1)
  t.same((await app.inject({ url: '/admin/events/evt_100', headers: auth })).json().json, JSON.parse(shallow), '100 deep keeps its JSON view')
})
