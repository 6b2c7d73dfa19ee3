/**
 * The console's session on the admin API: the token entered once becomes a signed HttpOnly SameSite=Strict
 * cookie; a state change with it needs the CSRF token; logins are rate-limited; every answer has a strict CSP.
 */
import t from 'tap'
import Fastify from 'fastify'
import anvilAdmin from '../../plugins/admin/admin.js'
import { SessionKeys, SESSION_TTL_MS } from '../../plugins/admin/session.js'
import { memorySessionStore } from '../../plugins/admin/session-store.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const TOKEN = 'admin-token-session-0123'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

/** The admin API with one route that changes something, and counts how often it ran. */
async function adminApp (options: { loginsPerMinute?: number, token?: string, redis?: string, trustProxy?: boolean } = {}): Promise<ReturnType<typeof Fastify> & { changes: () => number }> {
  const app = Fastify({ trustProxy: options.trustProxy })
  let changes = 0
  await app.register(anvilAdmin, {
    token: options.token ?? TOKEN,
    loginsPerMinute: options.loginsPerMinute,
    ...(options.redis === undefined ? {} : { redis: options.redis }),
    routes: [async (admin) => { admin.post('/change', async () => ({ changes: ++changes })) }]
  })
  t.teardown(async () => await app.close())
  return Object.assign(app, { changes: () => changes })
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
  const keys = new SessionKeys(TOKEN, memorySessionStore())
  const unsigned = decodeURIComponent(value).split('.').slice(0, 2).join('.')
  const fake = { cookies: { anvil_admin_session: 'x' }, unsignCookie: () => ({ valid: true, renew: false, value: unsigned }) }
  const expiresAt = Number(unsigned.split('.')[0])
  t.ok(keys.parse(fake as never, expiresAt - 1) !== undefined, 'open until it expires')
  t.equal(keys.parse(fake as never, expiresAt), undefined, 'closed once it expires')
  t.ok(expiresAt - Date.now() <= SESSION_TTL_MS)
})

t.test('a logout ends the session on the server: its cookie and CSRF token change nothing afterwards', async (t) => {
  for (const store of ['memory', 'redis'] as const) {
    const app = await adminApp(store === 'redis' ? { redis: redis.url } : {})
    const { cookie, csrf } = await login(app)
    const change = async (): Promise<number> => (await app.inject({ method: 'POST', url: '/admin/change', headers: { cookie, 'x-csrf-token': csrf } })).statusCode
    t.equal(await change(), 200, `${store}: the session changes things`)
    t.equal((await app.inject({ method: 'DELETE', url: '/admin/session', headers: { cookie, 'x-csrf-token': csrf } })).statusCode, 204)
    t.equal(await change(), 401, `${store}: the old cookie and CSRF token are refused`)
    t.same((await app.inject({ url: '/admin/session', headers: { cookie } })).json(), { error: 'Missing or wrong admin token', code: 'ANVIL_ERR_UNAUTHORIZED' })
    t.equal(app.changes(), 1)
  }
})

t.test('the session probe answers 200 whether or not a session is open: logged out is no failed request', async (t) => {
  const app = await adminApp()
  const state = async (headers: Record<string, string> = {}) => await app.inject({ url: '/admin/session/state', headers })
  const none = await state()
  t.equal(none.statusCode, 200)
  t.same(none.json(), { authenticated: false, csrfToken: null, expiresAt: null })
  const { cookie, csrf } = await login(app)
  const open = await state({ cookie })
  t.equal(open.statusCode, 200)
  t.match(open.json(), { authenticated: true, csrfToken: csrf, expiresAt: /^\d{4}-\d\d-\d\dT/ })
  t.equal((await app.inject({ method: 'DELETE', url: '/admin/session', headers: { cookie, 'x-csrf-token': csrf } })).statusCode, 204)
  t.same((await state({ cookie })).json(), { authenticated: false, csrfToken: null, expiresAt: null }, 'an ended session: no CSRF token')
  t.same((await state({ cookie: `${cookie.split('=')[0] ?? ''}=forged` })).json().authenticated, false, 'a forged cookie')
})

t.test('the probe tells a session, and only a session, which route families the server has', async (t) => {
  const app = await adminApp()
  t.notOk('features' in (await app.inject({ url: '/admin/session/state' })).json(), 'logged out: nothing of the set-up')
  const { cookie } = await login(app)
  t.same((await app.inject({ url: '/admin/session/state', headers: { cookie } })).json().features, { journal: false, outbound: false, portal: false })
  const journal = Fastify()
  t.teardown(async () => await journal.close())
  await journal.register(anvilAdmin, { token: TOKEN, prefix: '/ops', routes: [async (admin) => { admin.get('/events', async () => ({ items: [], next: null })) }] })
  const res = await journal.inject({ method: 'POST', url: '/ops/session', payload: { token: TOKEN } })
  const opened = String(res.headers['set-cookie']).split(';')[0] as string
  t.same((await journal.inject({ url: '/ops/session/state', headers: { cookie: opened } })).json().features, { journal: true, outbound: false, portal: false }, 'under any prefix')
})

t.test('log out everywhere: DELETE /admin/sessions ends every session, on every replica sharing Redis', async (t) => {
  const [a, b] = [await adminApp({ redis: redis.url }), await adminApp({ redis: redis.url })]
  const first = await login(a)
  const second = await login(b)
  const mine = await login(a)
  t.equal((await b.inject({ method: 'POST', url: '/admin/change', headers: { cookie: first.cookie, 'x-csrf-token': first.csrf } })).statusCode, 200, 'a session opened on one replica works on the other')
  t.equal((await b.inject({ method: 'DELETE', url: '/admin/session', headers: { cookie: first.cookie, 'x-csrf-token': first.csrf } })).statusCode, 204)
  t.equal((await a.inject({ method: 'POST', url: '/admin/change', headers: { cookie: first.cookie, 'x-csrf-token': first.csrf } })).statusCode, 401, 'logged out on one replica: out on the other')
  t.equal((await a.inject({ method: 'POST', url: '/admin/change', headers: { cookie: second.cookie, 'x-csrf-token': second.csrf } })).statusCode, 200, 'the others stay open')
  const everywhere = await a.inject({ method: 'DELETE', url: '/admin/sessions', headers: { cookie: mine.cookie, 'x-csrf-token': mine.csrf } })
  t.equal(everywhere.statusCode, 204)
  t.match(String(everywhere.headers['set-cookie']), /anvil_admin_session=; Max-Age=0/)
  for (const { cookie, csrf } of [second, mine]) {
    for (const app of [a, b]) t.equal((await app.inject({ method: 'POST', url: '/admin/change', headers: { cookie, 'x-csrf-token': csrf } })).statusCode, 401)
  }
  t.equal((await a.inject({ method: 'DELETE', url: '/admin/sessions', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 204, 'with the Bearer token too')
  t.equal((await b.inject({ method: 'DELETE', url: '/admin/sessions', headers: { cookie: mine.cookie } })).statusCode, 403, 'a cookie needs the CSRF token for it')
  const fresh = await login(b)
  t.equal((await a.inject({ method: 'POST', url: '/admin/change', headers: { cookie: fresh.cookie, 'x-csrf-token': fresh.csrf } })).statusCode, 200, 'a new login works')
})

t.test('Redis down: a cookie request is 503 { error, code }, the Bearer token still works', async (t) => {
  const own = await TestRedis.start()
  t.teardown(async () => await own.stop())
  const app = await adminApp({ redis: own.url })
  const { cookie, csrf } = await login(app)
  await own.stop()
  const res = await app.inject({ method: 'POST', url: '/admin/change', headers: { cookie, 'x-csrf-token': csrf } })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { error: 'Session store (Redis) unavailable, retry later or use the Bearer token', code: 'ANVIL_ERR_SESSION_STORE_UNAVAILABLE' })
  t.equal((await app.inject({ method: 'POST', url: '/admin/change', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/admin/session', payload: { token: TOKEN } })).statusCode, 503, 'no login it could not record')
})

t.test('only failed logins count, per client address: a stranger cannot lock out an operator, the token is never refused for use', async (t) => {
  for (const store of ['memory', 'redis'] as const) {
    const app = await adminApp({ loginsPerMinute: 3, ...(store === 'redis' ? { redis: redis.url } : {}) })
    const from = (remoteAddress: string, token: string) => app.inject({ method: 'POST', url: '/admin/session', payload: { token }, remoteAddress })
    for (let i = 0; i < 12; i++) t.equal((await from('192.0.2.7', TOKEN)).statusCode, 200, `${store}: success ${i + 1} counts for nothing`)
    for (let i = 0; i < 3; i++) t.equal((await from('192.0.2.66', 'wrong-token-guess-' + i)).statusCode, 401)
    const limited = await from('192.0.2.66', TOKEN)
    t.equal(limited.statusCode, 429, `${store}: the guesser is refused, even with the right token`)
    t.equal((await from('192.0.2.7', TOKEN)).statusCode, 200, `${store}: the operator elsewhere is not`)
  }
  // Behind a proxy, trustProxy makes request.ip the client's (X-Forwarded-For), so clients are told apart.
  const proxied = await adminApp({ loginsPerMinute: 2, trustProxy: true })
  const via = (client: string, token: string) => proxied.inject({ method: 'POST', url: '/admin/session', payload: { token }, remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': client } })
  for (let i = 0; i < 2; i++) t.equal((await via('198.51.100.9', 'wrong-token-guess-' + i)).statusCode, 401)
  t.equal((await via('198.51.100.9', TOKEN)).statusCode, 429)
  t.equal((await via('203.0.113.5', TOKEN)).statusCode, 200, 'another client through the same proxy logs in')
})

t.test('failed logins sent at once cannot pass the limit together: each is counted before its token is compared', async (t) => {
  for (const store of ['memory', 'redis'] as const) {
    const app = await adminApp({ loginsPerMinute: 3, ...(store === 'redis' ? { redis: redis.url } : {}) })
    const from = (remoteAddress: string, token: string) => app.inject({ method: 'POST', url: '/admin/session', payload: { token }, remoteAddress })
    const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await from('192.0.2.99', 'wrong-token-guess-' + i)).statusCode))
    t.equal(answers.filter((code) => code === 401).length, 3, `${store}: exactly the limit's worth of tokens compared`)
    t.equal(answers.filter((code) => code === 429).length, 17, `${store}: the rest refused unread`)
    t.equal((await from('192.0.2.99', TOKEN)).statusCode, 429, `${store}: still limited`)
    t.equal((await from('192.0.2.100', TOKEN)).statusCode, 200, `${store}: another address is not`)
  }
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
