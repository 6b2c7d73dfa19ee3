/**
 * `anvil serve`'s admin API: on only with ANVIL_ADMIN_TOKEN (a short one is one clear line, never quoted), on
 * the main port or on ANVIL_ADMIN_PORT alone, and feature route sets registered inside its scope with the
 * database of ANVIL_DATABASE_URL, closed with the server. `anvil portal token` and `anvil portal revoke` against a
 * real `anvil serve` with ANVIL_DATABASE_URL: the token it prints opens the tenant's view of the admin API, and
 * the revocation closes it.
 */
import t from 'tap'
import pino from 'pino'
import { loadServeConfig } from '../../cli/config/load-config.js'
import { registerAdmin, type AdminFeatureContext } from '../../cli/admin-server.js'
import { createApp } from '../../cli/server.js'
import { isAnvilError } from '../../src/shared/errors.js'
import { migrate } from '../../src/db/migrate.js'
import { NEVER_PRINTED, runCli, startCli } from '../helpers/cli.js'
import { beforeAll } from '../helpers/before-all.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'

const TOKEN = 'admin-token-for-cli-tests'
const SECRET = 'whsec_cli_admin_0123456789'
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())

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

t.test('anvil serve: no token, no admin API; ANVIL_ADMIN_PORT, on that port only', async (t) => {
  const base = { REDIS_URL: redis.url, WEBHOOK_SECRET: NEVER_PRINTED, HOST: '127.0.0.1', PORT: '0' }
  const auth = { authorization: `Bearer ${TOKEN}` }

  const off = startCli(t, ['serve'], { env: base })
  let port = await off.listeningPort('anvil serve: listening')
  t.equal((await fetch(`http://127.0.0.1:${port}/admin/openapi.json`, { headers: auth })).status, 404, 'no token: no admin API')
  t.equal(await off.stop(), 0)

  const apart = startCli(t, ['serve', '--admin-port', '0'], { env: { ...base, ANVIL_ADMIN_TOKEN: TOKEN } })
  const adminPort = await apart.listeningPort('anvil serve: admin API listening')
  port = await apart.listeningPort('anvil serve: listening')
  t.equal((await fetch(`http://127.0.0.1:${port}/admin/openapi.json`, { headers: auth })).status, 404, 'not on the webhook port')
  t.equal((await fetch(`http://127.0.0.1:${adminPort}/admin/openapi.json`, { headers: auth })).status, 200)
  t.equal((await fetch(`http://127.0.0.1:${adminPort}/webhooks`, { method: 'POST', body: '{}' })).status, 404, 'no webhooks on the admin port')
  t.equal(await apart.stop(), 0)
  t.notMatch(apart.output, TOKEN)
})

// One serve with a token on the main port, a database and a portal URL: the admin API there, and the portal's
// tokens through it (a start costs about 1 s of CPU).
t.test('anvil serve with ANVIL_ADMIN_TOKEN, ANVIL_DATABASE_URL and ANVIL_PORTAL_PUBLIC_URL', async (t) => {
  const env = { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url }
  const serve = startCli(t, ['serve'], { env: { ...env, WEBHOOK_SECRET: 'whsec_cli_portal_0123456789', ANVIL_ADMIN_TOKEN: TOKEN, HOST: '127.0.0.1', PORT: '0', ANVIL_PORTAL_PUBLIC_URL: 'https://hooks.example/' } })
  const port = await serve.listeningPort('anvil serve: listening')
  const base = `http://127.0.0.1:${port}`

  await t.test('anvil serve: a token, the API on the main port', async (t) => {
    t.equal((await fetch(`${base}/admin/openapi.json`)).status, 401)
    t.equal((await fetch(`${base}/admin/openapi.json`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200)
  })

  await t.test('a token minted with the CLI opens the tenant\'s endpoints; revoked with the CLI it is 401', async (t) => {
    const admin = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
    await fetch(`${base}/admin/endpoints`, { method: 'POST', headers: admin, body: JSON.stringify({ url: 'https://hooks.example/acme', tenant: 'acme' }) })
    await fetch(`${base}/admin/endpoints`, { method: 'POST', headers: admin, body: JSON.stringify({ url: 'https://hooks.example/globex', tenant: 'globex' }) })

    const minted = await runCli(['portal', 'token', '--tenant', 'acme', '--ttl', '2h', '--url', base], { env: { ANVIL_ADMIN_TOKEN: TOKEN } })
    t.equal(minted.code, 0, minted.stderr)
    const { token, url, expiresAt } = JSON.parse(minted.stdout) as { token: string, url: string, expiresAt: string }
    t.match(url, /^https:\/\/hooks\.example\/admin\/portal\/#code=anvil_pl_/, 'the link starts with ANVIL_PORTAL_PUBLIC_URL, and holds a one-time code')
    t.ok(Math.abs(Date.parse(expiresAt) - Date.now() - 2 * 3600_000) < 60_000, 'two hours')
    const list = async (): Promise<{ status: number, body: { items?: Array<{ tenant: string }> } }> => {
      const res = await fetch(`${base}/admin/endpoints`, { headers: { authorization: `Bearer ${token}` } })
      return { status: res.status, body: await res.json() as { items?: Array<{ tenant: string }> } }
    }
    const seen = await list()
    t.equal(seen.status, 200)
    t.same(seen.body.items?.map((endpoint) => endpoint.tenant), ['acme'], 'the tenant\'s endpoints only')
    t.equal((await fetch(`${base}/admin/events`, { headers: { authorization: `Bearer ${token}` } })).status, 403, 'the journal is closed to it')

    const bad = await runCli(['portal', 'token', '--tenant', 'acme', '--ttl', 'soon', '--url', base], { env: { ANVIL_ADMIN_TOKEN: TOKEN } })
    t.equal(bad.code, 1)
    t.match(bad.stderr, /^anvil: .*--ttl must be a whole number and a unit/)
    const noUrl = await runCli(['portal', 'token', '--tenant', 'acme'], { env: { ANVIL_ADMIN_TOKEN: TOKEN } })
    t.equal(noUrl.code, 1)
    t.match(noUrl.stderr, /--url \(ANVIL_ADMIN_URL\) and ANVIL_ADMIN_TOKEN are required/)

    const revoked = await runCli(['portal', 'revoke', '--tenant', 'acme', '--url', base], { env: { ANVIL_ADMIN_TOKEN: TOKEN } })
    t.equal(revoked.code, 0, revoked.stderr)
    t.match(JSON.parse(revoked.stdout), { tenant: 'acme', revokedBefore: String })
    t.match(await list(), { status: 401, body: { code: 'ANVIL_ERR_UNAUTHORIZED' } })
    t.notMatch(serve.output, token.split('.')[0]?.slice(9) as string, 'the token is not in the server\'s log')
  })

  t.equal(await serve.stop(), 0)
  t.notMatch(serve.output, TOKEN, 'the token is never logged')
})

t.test('feature route sets run inside the admin scope, with the database, which closes with the server', async (t) => {
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

t.test('ANVIL_PORTAL_PUBLIC_URL and ANVIL_PORTAL_FRAME_ANCESTORS become anvilAdmin\'s portal options; a bad one is one line', async (t) => {
  const env = { WEBHOOK_SECRET: 'whsec_cli_portal_0123456789', ANVIL_ADMIN_TOKEN: TOKEN }
  t.same(loadServeConfig({ ...env, ANVIL_PORTAL_PUBLIC_URL: 'https://hooks.example', ANVIL_PORTAL_FRAME_ANCESTORS: "https://app.example, https://*.example.com:8443,'self'" }).portal,
    { publicUrl: 'https://hooks.example', frameAncestors: ['https://app.example', 'https://*.example.com:8443', "'self'"] })
  t.equal(loadServeConfig(env).portal, undefined)
  t.throws(() => loadServeConfig({ ...env, ANVIL_PORTAL_FRAME_ANCESTORS: 'https://app.example; script-src *' }),
    { code: 'ANVIL_ERR_INVALID_CONFIG', message: /ANVIL_PORTAL_FRAME_ANCESTORS must be comma-separated origins/ })
  t.throws(() => loadServeConfig({ ...env, ANVIL_PORTAL_PUBLIC_URL: 'https://hooks.example/?x=1' }),
    { code: 'ANVIL_ERR_INVALID_CONFIG', message: /ANVIL_PORTAL_PUBLIC_URL must be an http\(s\) URL with no query or fragment/ })
})
