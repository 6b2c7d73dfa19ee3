/**
 * A portal link leaves nothing usable in the browser's history (issue 33, item 6), in a real Chromium with a
 * persistent profile against a real admin API and PostgreSQL: the link carries a one-time code, never the token;
 * the page exchanges it for its session and works on reload; Chromium's History database (copied, as Chromium
 * holds it open) then holds no `anvil_pt_` token and no code that still opens a session; the link opened again
 * shows "This link was used". Over HTTP: a code opens one session of its link's tenant and scopes, distinct from
 * the API token minted with it, once, even raced; an unknown, forged or revoked one is 401.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { AddressInfo } from 'node:net'
import { execFile } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import anvilAdmin from '../../plugins/admin/admin.js'
import { consoleErrors, openBrowserWithProfile, screenshot } from '../helpers/browser.js'
import { pageErrors } from '../helpers/console.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

t.setTimeout(180_000)
const TOKEN = 'portal-link-once-admin-token-0123456789'
const fixture = outboundFixture()
const outbound = beforeAll(t, async () => fixture.open())
let base: string
beforeStep(t, async () => {
  await outbound.endpoints.create({ url: 'https://hooks.acme.example/in', tenant: 'acme' })
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, outbound })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => await app.close())
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
})

interface Answer { status: number, body: Record<string, unknown> }
async function call (method: string, path: string, body?: object, token = TOKEN): Promise<Answer> {
  const res = await fetch(`${base}/admin${path}`, {
    method, headers: { ...(token === '' ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? {} : JSON.parse(text) }
}
const mint = async (body: object): Promise<{ token: string, url: string }> => (await call('POST', '/portal/tokens', body)).body as { token: string, url: string }
const codeOf = (url: string): string => decodeURIComponent(/#code=([^&]+)/.exec(url)?.[1] ?? '')
const exchange = async (code: string): Promise<Answer> => await call('POST', '/portal/session', { code }, '')

/** The URLs of Chromium's History database, read from a copy (Chromium keeps the file open), and its raw bytes. */
async function history (profile: string): Promise<{ urls: string[], raw: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-history-'))
  try {
    const files = readdirSync(join(profile, 'Default')).filter((name) => name.startsWith('History'))
    for (const name of files) copyFileSync(join(profile, 'Default', name), join(dir, name))
    const raw = files.map((name) => readFileSync(join(dir, name)).toString('latin1')).join('\n')
    if (!existsSync(join(dir, 'History'))) return { urls: [], raw }
    const { stdout } = await promisify(execFile)('python3', ['-c',
      'import json, sqlite3, sys; print(json.dumps([row[0] for row in sqlite3.connect(sys.argv[1]).execute("SELECT url FROM urls")]))', join(dir, 'History')])
    return { urls: JSON.parse(stdout) as string[], raw }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

t.test('the link opens the portal once; Chromium\'s history keeps no token and no usable code; opened again, it says it was used', async (t) => {
  const { context, profile } = await openBrowserWithProfile(t)
  const link = await mint({ tenant: 'acme' })
  t.match(link.url, /\/admin\/portal\/#code=anvil_pl_[A-Za-z0-9_-]{43}$/, 'the link carries a one-time code')
  t.notOk(link.url.includes(link.token) || link.url.includes('anvil_pt_'), 'and never the token')

  const page = await context.newPage()
  const errors = consoleErrors(page)
  t.teardown(async () => { await screenshot(page, 'tenants-portal-link-once-last') })
  await page.goto(link.url)
  await page.getByTestId('endpoint').first().waitFor()
  t.notMatch(page.url(), /code=|anvil_p/, 'the code left the address bar')
  await page.reload()
  await page.getByTestId('endpoint').first().waitFor()
  t.pass('a reload keeps the session')

  const seen = await eventually('Chromium\'s History database has the portal page', async () => {
    const found = await history(profile)
    return found.urls.some((url) => url.includes('/admin/portal/')) ? found : undefined
  })
  t.notOk(seen.raw.includes('anvil_pt_'), 'no portal token anywhere in the History files')
  t.same(seen.urls.filter((url) => url.includes('anvil_pt_')), [], 'no URL of the history holds a token')
  const codes = seen.urls.flatMap((url) => [...url.matchAll(/code=(anvil_pl_[A-Za-z0-9_-]+)/g)].map((m) => m[1] as string))
  t.comment(`the history holds the link's code ${codes.length} time(s)`)
  for (const code of codes) t.match(await exchange(code), { status: 410, body: { code: 'ANVIL_ERR_PORTAL_LINK_USED' } }, 'a code in the history opens nothing')

  const again = await context.newPage()
  const againErrors = consoleErrors(again)
  t.teardown(async () => { await screenshot(again, 'tenants-portal-link-used'); await again.close() })
  await again.goto(link.url)
  await again.getByRole('heading', { level: 1, name: 'This link was used' }).waitFor()
  t.match(await again.getByTestId('no-access').innerText(), /opens this page once/, 'a clean page that says what happened')
  t.equal(await again.getByRole('navigation', { name: 'Sections' }).count(), 0, 'and shows nothing of the tenant')
  t.same([...pageErrors(errors), ...pageErrors(againErrors)], [], 'no error but the 410 the page explains')
})

t.test('a code opens one session of its link\'s tenant, scopes and expiry, its own token; once, even raced; a wrong or revoked one is 401', async (t) => {
  const link = await mint({ tenant: 'acme', scopes: ['read'], ttlSeconds: 600 })
  const answers = await Promise.all(Array.from({ length: 8 }, async () => await exchange(codeOf(link.url))))
  t.same(answers.map((a) => a.status).sort(), [201, 410, 410, 410, 410, 410, 410, 410], 'eight exchanges at once: one session')
  const session = answers.find((a) => a.status === 201)?.body as { token: string, expiresAt: string }
  t.match(session.token, /^anvil_pt_/)
  t.not(session.token, link.token, 'the session\'s token is not the API token minted with the link')
  t.match(await call('GET', '/portal/session', undefined, session.token), { status: 200, body: { tenant: 'acme', scopes: ['read'], expiresAt: session.expiresAt } })
  t.match(await call('GET', '/endpoints', undefined, link.token), { status: 200, body: { items: [{ tenant: 'acme' }] } }, 'the API token works apart from the link')

  for (const code of ['anvil_pl_' + 'x'.repeat(43), 'anvil_pl_forged', link.token]) {
    t.match(await exchange(code), { status: 401, body: { code: 'ANVIL_ERR_UNAUTHORIZED' } }, `${code.slice(0, 12)}…: 401`)
  }
  const revoked = await mint({ tenant: 'initech' })
  await call('POST', '/portal/tenants/initech/revoke')
  t.match(await exchange(codeOf(revoked.url)), { status: 401, body: { code: 'ANVIL_ERR_UNAUTHORIZED' } }, 'a link of a revoked tenant opens nothing')
  t.match(await call('POST', '/portal/session', { code: codeOf((await mint({ tenant: 'acme' })).url) }, link.token),
    { status: 403 }, 'a portal token cannot use it')
})
