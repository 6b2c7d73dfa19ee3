/**
 * The console's session on the admin API: the token entered once becomes a signed HttpOnly SameSite=Strict
 * cookie; a state change with it needs the CSRF token; logins are rate-limited; every answer has a strict CSP.
 */
import t from 'tap'
import Fastify from 'fastify'
import anvilAdmin from '../plugins/admin/admin.js'
import { SessionKeys, SESSION_TTL_MS } from '../plugins/admin/session.js'

const TOKEN = 'admin-token-session-0123'

async function adminApp (options: { loginsPerMinute?: number, token?: string } = {}): Promise<ReturnType<typeof Fastify>> {
  const app = Fastify()
  await app.register(anvilAdmin, { token: options.token ?? TOKEN, loginsPerMinute: options.loginsPerMinute })
  t.teardown(async () => await app.close())
  return app
}

async function login (app: ReturnType<typeof Fastify>, token = TOKEN): Promise<{ cookie: string, csrf: string, setCookie: string }> {
  const res = await app.inject({ method: 'POST', url: '/admin/session', payload: { token } })
  if (res.statusCode !== 200) throw new Error(`login ${res.statusCode}`)
  const setCookie = String(res.headers['set-cookie'])
  return { cookie: setCookie.split(';')[0] as string, csrf: res.json().csrfToken, setCookie }
}

t.test('login: the right token sets a signed HttpOnly SameSite=Strict cookie on the admin path; a wrong one is 401', async (t) => {
  const app = await adminApp()
  const wrong = await app.inject({ method: 'POST', url: '/admin/session', payload: { token: TOKEN + 'x' } })
  t.equal(wrong.statusCode, 401)
  t.same(wrong.json(), { error: 'Missing or wrong admin token', code: 'ANVIL_ERR_UNAUTHORIZED' })
  t.equal(wrong.headers['set-cookie'], undefined)
  const { cookie, csrf, setCookie } = await login(app)
  t.match(setCookie, /^anvil_admin_session=\d{13}\.[A-Za-z0-9_-]{24}\.[^;]+; Max-Age=43200; Path=\/admin; HttpOnly; SameSite=Strict$/)
  t.notMatch(setCookie, TOKEN, 'the token is not in the cookie')
  t.match(csrf, /^[A-Za-z0-9_-]{43}$/)
  t.equal((await app.inject({ url: '/admin/openapi.json', headers: { cookie } })).statusCode, 200, 'the cookie opens the API')
  const proxied = await app.inject({ method: 'POST', url: '/admin/session', payload: { token: TOKEN }, headers: { 'x-forwarded-proto': 'https' } })
  t.match(String(proxied.headers['set-cookie']), /; Secure/, 'Secure behind a proxy that terminates TLS')
  t.same((await app.inject({ url: '/admin/session', headers: { cookie } })).json().csrfToken, csrf, 'the page can read its CSRF token again')
})

t.test('with the cookie, a state change needs the CSRF token; with Bearer it does not', async (t) => {
  const app = await adminApp()
  const { cookie, csrf } = await login(app)
  for (const headers of [{ cookie }, { cookie, 'x-csrf-token': 'wrong' }, { cookie, 'x-csrf-token': csrf.slice(1) }]) {
    const res = await app.inject({ method: 'DELETE', url: '/admin/session', headers })
    t.equal(res.statusCode, 403)
    t.same(res.json(), { error: 'Missing or wrong CSRF token (x-csrf-token)', code: 'ANVIL_ERR_CSRF' })
  }
  const post = await app.inject({ method: 'POST', url: '/admin/nothing-here', headers: { cookie } })
  t.equal(post.statusCode, 403, 'checked before the route is even looked at')
  const out = await app.inject({ method: 'DELETE', url: '/admin/session', headers: { cookie, 'x-csrf-token': csrf } })
  t.equal(out.statusCode, 204)
  t.match(String(out.headers['set-cookie']), /anvil_admin_session=; Max-Age=0; Path=\/admin; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict/)
  const bearer = await app.inject({ method: 'DELETE', url: '/admin/session', headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(bearer.statusCode, 204, 'a Bearer caller sends no ambient credential, so needs no CSRF token')
})

t.test('a tampered, foreign or expired cookie is 401', async (t) => {
  const app = await adminApp()
  const { cookie } = await login(app)
  const [name, value] = cookie.split('=') as [string, string]
  const tampered = `${name}=9${value.slice(1)}`
  t.equal((await app.inject({ url: '/admin/openapi.json', headers: { cookie: tampered } })).statusCode, 401)
  const other = await adminApp({ token: 'another-admin-token-0123' })
  t.equal((await other.inject({ url: '/admin/openapi.json', headers: { cookie } })).statusCode, 401, 'a new token ends every session')
  const keys = new SessionKeys(TOKEN)
  const unsigned = decodeURIComponent(value).split('.').slice(0, 2).join('.')
  const fake = { cookies: { anvil_admin_session: 'x' }, unsignCookie: () => ({ valid: true, renew: false, value: unsigned }) }
  const expiresAt = Number(unsigned.split('.')[0])
  t.ok(keys.read(fake as never, expiresAt - 1) !== undefined, 'open until it expires')
  t.equal(keys.read(fake as never, expiresAt), undefined, 'closed once it expires')
  t.ok(expiresAt - Date.now() <= SESSION_TTL_MS)
})

t.test('logins are rate-limited: past the limit 429 { error, code }, even with the right token', async (t) => {
  const app = await adminApp({ loginsPerMinute: 3 })
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ method: 'POST', url: '/admin/session', payload: { token: 'wrong-token-guess-' + i } })).statusCode, 401)
  const limited = await app.inject({ method: 'POST', url: '/admin/session', payload: { token: TOKEN } })
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().code, 'ANVIL_ERR_RATE_LIMITED')
  t.match(limited.json().error, /^Too many attempts, retry in (\d+ seconds?|1 minute)$/)
  t.ok(limited.headers['retry-after'] !== undefined)
})

t.test('a strict Content-Security-Policy on the console and the API; the console files are open, the API is not', async (t) => {
  const app = await adminApp()
  const page = await app.inject({ url: '/admin/console/' })
  const api = await app.inject({ url: '/admin/openapi.json' })
  t.equal(api.statusCode, 401)
  for (const res of [page, api]) {
    const csp = String(res.headers['content-security-policy'])
    t.match(csp, "default-src 'none'")
    t.match(csp, "script-src 'self'")
    t.match(csp, "frame-ancestors 'none'")
    t.notMatch(csp, /unsafe-inline|unsafe-eval/)
    t.equal(res.headers['x-content-type-options'], 'nosniff')
  }
  t.equal((await app.inject({ url: '/admin/console' })).headers.location, '/admin/console/')
  t.equal((await app.inject({ url: '/admin/console/assets/nothing.js' })).statusCode, 404)
  t.equal((await app.inject({ url: '/admin/console/../openapi.json' })).statusCode, 401, 'no way around the guard')
})
