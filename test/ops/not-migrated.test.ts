/**
 * A database nobody migrated, met for the first time: every part that starts on it refuses with
 * ANVIL_ERR_NOT_MIGRATED and says to run `anvil migrate` (or `migrate: true`), instead of PostgreSQL's
 * `relation "anvil.outbox" does not exist` at the first publish or a bare 500 from the admin API. Real
 * PostgreSQL, Redis and the built CLI.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import anvilAdmin from '../../plugins/admin/admin.js'
import anvilOutbound from '../../plugins/outbound.js'
import anvilWorker from '../../plugins/worker.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'
import { cleanEnv, runCli } from '../helpers/cli.js'

const TOKEN = 'admin-token-not-migrated-0123456789'
const NOT_MIGRATED = { code: 'ANVIL_ERR_NOT_MIGRATED', message: /anvil migrate.*migrate: true/ }
const db = beforeAll(t, async () => await TestDatabase.create(), async (db) => await db.drop())
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

async function started (t: Test, register: (app: FastifyInstance) => Promise<unknown>): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(async () => await app.close())
  await register(app)
  await app.ready()
  return app
}

t.test('on a database nobody migrated, the plugins refuse to start, naming what is missing and what to run', async (t) => {
  await t.rejects(started(t, async (app) => await app.register(anvilOutbound, { database: db.url, redis: redis.url })),
    { ...NOT_MIGRATED, message: /schema "anvil" lacks \d+ migrations, 0001_outbound to /, statusCode: 500 }, 'anvilOutbound')
  await t.rejects(started(t, async (app) => await app.register(anvilWorker, { handler: () => {}, redis: redis.url, journal: { database: db.url } })),
    NOT_MIGRATED, 'anvilWorker with a journal')
  await t.rejects(started(t, async (app) => await app.register(anvilAdmin, { token: TOKEN, portal: { database: db.url } })),
    NOT_MIGRATED, 'anvilAdmin with the portal\'s own database')
})

t.test('anvil worker on it stops with the same line', async (t) => {
  const run = await runCli(['worker'], { env: cleanEnv({ REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url, ANVIL_METRICS_PORT: '0' }) })
  t.equal(run.code, 1)
  t.match(run.stderr, /^anvil: the database is not migrated \(schema "anvil" lacks .*\): run `anvil migrate`/im)
})

t.test('migrate: true migrates it, and then every part starts', async (t) => {
  const app = await started(t, async (app) => {
    await app.register(anvilOutbound, { database: db.url, redis: redis.url, migrate: true })
    await app.register(anvilWorker, { handler: () => {}, redis: redis.url, journal: { database: db.url } })
    await app.register(anvilAdmin, { token: TOKEN, portal: { database: db.url } })
  })
  t.equal((await app.inject({ url: '/admin/endpoints', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 200)
})

t.test('a schema gone after the start (or out of reach then): publish, the admin API and a portal link say what to run', async (t) => {
  const app = await started(t, async (app) => {
    await app.register(anvilOutbound, { database: db.url, redis: redis.url, migrate: true })
    await app.register(anvilAdmin, { token: TOKEN })
  })
  const admin = { authorization: `Bearer ${TOKEN}` }
  const minted = await app.inject({ method: 'POST', url: '/admin/portal/tokens', headers: admin, payload: { tenant: 'acme' } })
  t.equal(minted.statusCode, 201)
  await db.query('DROP SCHEMA anvil CASCADE')

  await t.rejects(app.anvil.publish({ type: 'invoice.paid', data: {} }), { code: 'ANVIL_ERR_NOT_MIGRATED', message: /relation "anvil\.\w+" does not exist.*anvil migrate/ })
  const answer = { error: /^The database is not migrated \(relation .* does not exist\): run `anvil migrate`/, code: 'ANVIL_ERR_NOT_MIGRATED' }
  const endpoints = await app.inject({ url: '/admin/endpoints', headers: admin })
  t.match({ status: endpoints.statusCode, body: endpoints.json() }, { status: 500, body: answer }, 'GET /admin/endpoints')
  const portal = await app.inject({ url: '/admin/endpoints', headers: { authorization: `Bearer ${(minted.json() as { token: string }).token}` } })
  t.match({ status: portal.statusCode, body: portal.json() }, { status: 500, body: answer }, 'the portal link')
})
