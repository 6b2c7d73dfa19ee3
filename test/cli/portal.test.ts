/**
 * `anvil portal token` and `anvil portal revoke` against a real `anvil serve` with ANVIL_DATABASE_URL: the token
 * it prints opens the tenant's view of the admin API, and the revocation closes it.
 */
import t from 'tap'
import { loadServeConfig } from '../../cli/config/load-config.js'
import { runCli, startCli } from '../helpers/cli.js'
import { TestDatabase } from '../helpers/pg.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const TOKEN = 'admin-token-for-cli-portal'
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())
const db = beforeAll(t, async () => await TestDatabase.migrated(), async (db) => await db.drop())

t.test('a token minted with the CLI opens the tenant\'s endpoints; revoked with the CLI it is 401', async (t) => {
  const env = { REDIS_URL: redis.url, ANVIL_DATABASE_URL: db.url }
  const serve = startCli(t, ['serve'], { env: { ...env, WEBHOOK_SECRET: 'whsec_cli_portal_0123456789', ANVIL_ADMIN_TOKEN: TOKEN, HOST: '127.0.0.1', PORT: '0', ANVIL_PORTAL_PUBLIC_URL: 'https://hooks.example/' } })
  const port = await serve.listeningPort('anvil serve: listening')
  const base = `http://127.0.0.1:${port}`
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
