/**
 * `anvil serve`'s admin API: on only with ANVIL_ADMIN_TOKEN (a short one is one clear line, never quoted), on
 * the main port or on ANVIL_ADMIN_PORT alone, and feature route sets registered inside its scope with the
 * database of ANVIL_DATABASE_URL, closed with the server.
 */
import t from 'tap'
import pino from 'pino'
import { loadServeConfig } from '../../cli/config/load-config.js'
import { registerAdmin, type AdminFeatureContext } from '../../cli/admin-server.js'
import { createApp } from '../../cli/server.js'
import { isAnvilError } from '../../src/shared/errors.js'
import { migrate } from '../../src/db/migrate.js'
import { NEVER_PRINTED, startCli } from '../helpers/cli.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'

const TOKEN = 'admin-token-for-cli-tests'
const SECRET = 'whsec_cli_admin_0123456789'

function refusal (env: Record<string, string>): string {
  try {
    loadServeConfig({ WEBHOOK_SECRET: SECRET, ...env })
  } catch (err) {
    if (isAnvilError(err) && err.code === 'ANVIL_ERR_INVALID_CONFIG') return err.message
    throw err
  }
  throw new Error('expected a configuration error')
}

t.test('admin settings: one line each, the token never quoted back', async (t) => {
  t.equal(refusal({ ANVIL_ADMIN_TOKEN: 'short-Secret' }),
    'Invalid configuration: ANVIL_ADMIN_TOKEN must be at least 16 characters, none of them whitespace (got "12 characters")')
  t.equal(refusal({ ANVIL_ADMIN_TOKEN: 'sixteen chars or more' }),
    'Invalid configuration: ANVIL_ADMIN_TOKEN must be at least 16 characters, none of them whitespace (got "21 characters")')
  t.equal(refusal({ ANVIL_ADMIN_PORT: '3101' }),
    'Invalid configuration: ANVIL_ADMIN_PORT is set but ANVIL_ADMIN_TOKEN is not: the admin API is off without a token')
  t.equal(refusal({ ANVIL_ADMIN_TOKEN: TOKEN, ANVIL_ADMIN_PORT: '3000' }), 'Invalid configuration: ANVIL_ADMIN_PORT must differ from the main port (got 3000)')
  t.equal(refusal({ ANVIL_ADMIN_TOKEN: TOKEN, ANVIL_ADMIN_PORT: 'x' }), 'Invalid configuration: ANVIL_ADMIN_PORT must be an integer from 0 to 65535 (got "x")')
  t.equal(refusal({ ANVIL_DATABASE_URL: 'mysql://u:pw@db/x' }), 'Invalid configuration: ANVIL_DATABASE_URL must be a postgres:// or postgresql:// URL (got "mysql://u:***@db/x")')
  t.same(loadServeConfig({ WEBHOOK_SECRET: SECRET }).admin, undefined, 'off without a token')
  t.match(loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_ADMIN_TOKEN: TOKEN, ANVIL_ADMIN_PORT: '3101', ANVIL_DATABASE_URL: 'postgres://db/anvil' }),
    { admin: { token: TOKEN, port: 3101 }, databaseUrl: 'postgres://db/anvil' })
})

t.test('anvil serve: no token, no admin API; a token, the API on the main port; ANVIL_ADMIN_PORT, on that port only', async (t) => {
  const redis = await TestRedis.start()
  t.teardown(async () => await redis.stop())
  const base = { REDIS_URL: redis.url, WEBHOOK_SECRET: NEVER_PRINTED, HOST: '127.0.0.1', PORT: '0' }
  const auth = { authorization: `Bearer ${TOKEN}` }

  const off = startCli(t, ['serve'], { env: base })
  let port = await off.listeningPort('anvil serve: listening')
  t.equal((await fetch(`http://127.0.0.1:${port}/admin/openapi.json`, { headers: auth })).status, 404, 'no token: no admin API')
  t.equal(await off.stop(), 0)

  const main = startCli(t, ['serve'], { env: { ...base, ANVIL_ADMIN_TOKEN: TOKEN } })
  port = await main.listeningPort('anvil serve: listening')
  t.equal((await fetch(`http://127.0.0.1:${port}/admin/openapi.json`)).status, 401)
  t.equal((await fetch(`http://127.0.0.1:${port}/admin/openapi.json`, { headers: auth })).status, 200)
  t.equal(await main.stop(), 0)
  t.notMatch(main.output, TOKEN, 'the token is never logged')

  const apart = startCli(t, ['serve', '--admin-port', '0'], { env: { ...base, ANVIL_ADMIN_TOKEN: TOKEN } })
  const adminPort = await apart.listeningPort('anvil serve: admin API listening')
  port = await apart.listeningPort('anvil serve: listening')
  t.equal((await fetch(`http://127.0.0.1:${port}/admin/openapi.json`, { headers: auth })).status, 404, 'not on the webhook port')
  t.equal((await fetch(`http://127.0.0.1:${adminPort}/admin/openapi.json`, { headers: auth })).status, 200)
  t.equal((await fetch(`http://127.0.0.1:${adminPort}/webhooks`, { method: 'POST', body: '{}' })).status, 404, 'no webhooks on the admin port')
  t.equal(await apart.stop(), 0)
  t.notMatch(apart.output, TOKEN)
})

t.test('feature route sets run inside the admin scope, with the database, which closes with the server', async (t) => {
  const db = await TestDatabase.create()
  t.teardown(async () => await db.drop())
  // The portal's revocations live there: a database nobody migrated is refused (test/ops/not-migrated.test.ts).
  await migrate(db.url, { schema: 'ops' })
  const log = pino({ level: 'silent' })
  let seen: AdminFeatureContext | undefined
  const app = createApp(log)
  const config = loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_ADMIN_TOKEN: TOKEN, ANVIL_DATABASE_URL: db.url, ANVIL_DB_SCHEMA: 'ops' })
  const apart = await registerAdmin(app, config, log, [
    (context) => {
      seen = context
      const database = context.database
      if (database === undefined) return undefined
      return async (admin) => {
        admin.get('/db-now', async () => ({ schema: database.schema, one: (await database.pool.query('select 1 as one')).rows[0].one }))
      }
    },
    () => undefined
  ])
  t.equal(apart, undefined, 'on the main app')
  const headers = { authorization: `Bearer ${TOKEN}` }
  t.equal((await app.inject({ url: '/admin/db-now' })).statusCode, 401, 'behind the token')
  t.same((await app.inject({ url: '/admin/db-now', headers })).json(), { schema: 'ops', one: 1 })
  t.match((await app.inject({ url: '/admin/openapi.json', headers })).json().paths, { '/admin/db-now': {} }, 'in the OpenAPI document')
  t.equal(seen?.queueName, undefined)
  t.equal(seen?.database?.owned, true)
  await app.close()
  t.equal(seen?.database?.pool.ended, true, 'the pool ends with the server')
})
