/**
 * The console in a real Chromium (test/helpers/browser.ts) against a real `anvil serve` and `anvil worker`,
 * with real Redis and PostgreSQL. Each test ends with a screenshot under .tap/console/ and an axe-core check
 * for serious violations on the pages it visited.
 */
import t, { type Test } from 'tap'
import type { BrowserContext, Page } from 'playwright-core'
import { migrate } from '../src/db/migrate.js'
import { startCli, type Cli } from './helpers/cli.js'
import { consoleErrors, openBrowser, screenshot, seriousViolations } from './helpers/browser.js'
import { TestDatabase } from './helpers/pg.js'
import { freePort, TestRedis } from './helpers/redis.js'

const TOKEN = 'console-admin-token-0123456789'
const SECRET = 'whsec_console_browser_0123456789'

const redis = await TestRedis.start()
const db = await TestDatabase.create()
t.teardown(async () => { await redis.stop(); await db.drop() })
await migrate(db.url)

const port = await freePort()
const base = `http://127.0.0.1:${port}`
const env = {
  REDIS_URL: redis.url, WEBHOOK_SECRET: SECRET, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ANVIL_DATABASE_URL: db.url, ANVIL_RETRY_SCHEDULE: 'none'
}
const server: Cli = startCli(t, ['serve'], { env: { ...env, PORT: String(port), ANVIL_ADMIN_TOKEN: TOKEN } })
const worker: Cli = startCli(t, ['worker', '--handler', 'test/fixtures/console-handler.mjs'], { env: { ...env, PORT: String(await freePort()) } })
t.teardown(async () => { await server.stop(); await worker.stop() })
await waitFor(async () => (await fetch(`${base}/health/ready`).catch(() => undefined))?.status === 200)

const context: BrowserContext = await openBrowser(t)

async function waitFor (check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('gave up waiting')
}

/** A page logged in (the session cookie is the context's), with its console errors collected. */
async function loggedIn (): Promise<{ page: Page, errors: string[] }> {
  const page = await context.newPage()
  const errors = consoleErrors(page)
  await page.goto(`${base}/admin/console/`)
  if (await page.getByLabel('Admin token').isVisible().catch(() => false)) {
    await page.getByLabel('Admin token').fill(TOKEN)
    await page.getByRole('button', { name: 'Log in' }).click()
  }
  await page.getByRole('navigation', { name: 'Sections' }).waitFor()
  return { page, errors }
}

/** The page's errors but the API's 4xx answers, which the page shows itself (wrong token, a feature not configured). */
const pageErrors = (errors: string[]): string[] => errors.filter((e) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(e))

async function checkAccessible (t: Test, page: Page, what: string): Promise<void> {
  t.same(await seriousViolations(page), [], `${what}: no serious axe-core violation`)
}

t.test('log in: a wrong token is refused, the right one opens a HttpOnly SameSite=Strict session', async (t) => {
  const page = await context.newPage()
  t.teardown(async () => await page.close())
  const errors = consoleErrors(page)
  await page.goto(`${base}/admin/console/`)
  await checkAccessible(t, page, 'login')
  await page.getByLabel('Admin token').fill('wrong-token-0123456789')
  await page.getByRole('button', { name: 'Log in' }).click()
  t.equal(await page.getByRole('alert').textContent(), 'Wrong token.')
  t.same(await context.cookies(), [], 'no session for a wrong token')
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.getByRole('heading', { name: 'Overview' }).waitFor()
  const [cookie] = await context.cookies()
  t.match(cookie, { name: 'anvil_admin_session', httpOnly: true, sameSite: 'Strict', path: '/admin' })
  t.notMatch(cookie?.value ?? '', TOKEN, 'the token is not in the cookie')
  t.equal(await page.evaluate(() => document.cookie), '', 'the page\'s script cannot read the session')
  await checkAccessible(t, page, 'overview')
  t.same(pageErrors(errors), [], 'no error in the page (a CSP refusal would be one)')
  await screenshot(page, 'login-overview')
})

t.test('a state change without the CSRF token is refused, even from the console\'s own origin with its cookie', async (t) => {
  const { page } = await loggedIn()
  t.teardown(async () => await page.close())
  const answer = await page.evaluate(async () => {
    const res = await fetch('/admin/session', { method: 'DELETE', credentials: 'same-origin' })
    return { status: res.status, body: await res.json() }
  })
  t.same(answer, { status: 403, body: { error: 'Missing or wrong CSRF token (x-csrf-token)', code: 'ANVIL_ERR_CSRF' } })
  await page.reload()
  await page.getByRole('heading', { name: 'Overview' }).waitFor()
  t.pass('still logged in')
  await screenshot(page, 'csrf-refused')
})
