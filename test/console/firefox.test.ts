/**
 * The console in a real, stock Firefox (Debian's firefox-esr over WebDriver BiDi, test/helpers/firefox.ts) against
 * the same real `anvil serve` and `anvil worker`, Redis and PostgreSQL as the Chromium tests. Each test ends with a
 * screenshot under .tap/console/firefox-*.png.
 */
import t from 'tap'
import { rmSync } from 'node:fs'
import type { Browser, Page } from 'puppeteer-core'
import { signRequest } from '../../src/testing/sign-request.js'
import { pageErrors, startConsoleServer, STRIPE_SECRET, TOKEN, type ConsoleServer } from '../helpers/console.js'
import { newFirefoxPage, openFirefox } from '../helpers/firefox.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

/** Markup in a payload, which must show as characters and never run. */
const XSS = ['<script>window.__xss=1</script>', '"><img src=x onerror=window.__xss=1>']

let { base, failSwitch, sendStripe, sendGithub, adminGet } = {} as ConsoleServer
beforeStep(t, async () => { ({ base, failSwitch, sendStripe, sendGithub, adminGet } = await startConsoleServer(t)) })
let browser: Browser
beforeStep(t, async () => { browser = await openFirefox(t) })
const rows = 'table.events tbody tr'

const textOf = async (page: Page, selector: string): Promise<string | null> =>
  await (await page.waitForSelector(selector))?.evaluate((e) => e.textContent) ?? null

// Fields by name: Firefox's accessibility tree gives the label's text to more than the field, which the ARIA query
// then matches too; buttons by role and name.
async function logIn (page: Page, token: string): Promise<void> {
  await page.locator('input[name="token"]').fill(token)
  await page.locator('::-p-aria(Log in[role="button"])').click()
}

async function loggedIn (t: Parameters<typeof newFirefoxPage>[0], name: string, hash = ''): Promise<{ page: Page, errors: string[] }> {
  const opened = await newFirefoxPage(t, browser, name)
  await opened.page.goto(`${base}/admin/console/${hash}`)
  await opened.page.waitForSelector('nav[aria-label="Sections"], input[name="token"]')
  if (await opened.page.$('input[name="token"]') !== null) await logIn(opened.page, TOKEN)
  await opened.page.waitForSelector('nav[aria-label="Sections"]')
  return opened
}

t.test('log in: a wrong token is refused, the right one opens a HttpOnly SameSite=Strict session', async (t) => {
  const { page, errors } = await newFirefoxPage(t, browser, 'firefox-login')
  await page.goto(`${base}/admin/console/`)
  await logIn(page, 'wrong-token-0123456789')
  t.equal(await textOf(page, '[role="alert"]'), 'Wrong token.')
  t.same(await browser.cookies(), [], 'no session for a wrong token')
  await logIn(page, TOKEN)
  await page.waitForSelector('nav[aria-label="Sections"]')
  t.equal(await textOf(page, 'main h1'), 'Overview')
  const cookies = await browser.cookies()
  t.equal(cookies.length, 1, 'one cookie: the session')
  t.match(cookies[0], { name: 'anvil_admin_session', httpOnly: true, sameSite: 'Strict', path: '/admin' })
  t.notMatch(cookies[0]?.value ?? '', TOKEN, 'the token is not in the cookie')
  t.equal(await page.evaluate(() => document.cookie), '', 'the page\'s script cannot read the session')
  t.same(pageErrors(errors), [], 'no error in the page (a CSP refusal would be one)')
})

t.test('events sent through the ingress are listed; a provider filter in the URL opens filtered', async (t) => {
  await sendStripe('evt_firefox_ok', 'invoice.paid', { amount: 4200 })
  await sendGithub('opened')
  await eventually('(adminGet<{ items: unknown[] }>(\'/events?status=done\')).items.length …', async () => (await adminGet<{ items: unknown[] }>('/events?status=done')).items.length >= 2)

  const { page, errors } = await loggedIn(t, 'firefox-events')
  await page.locator('nav[aria-label="Sections"] ::-p-text(Events)').click()
  await page.waitForFunction((selector) => document.querySelectorAll(selector).length === 2, {}, rows)
  const listed = await page.$$eval(rows, (trs) => trs.map((tr) => tr.textContent ?? ''))
  t.ok(listed.some((row) => row.includes('evt_firefox_ok') && row.includes('invoice.paid')), 'the Stripe event is listed')
  t.ok(listed.some((row) => row.includes('github')), 'the GitHub event is listed')

  // A shared link: the filter comes from the URL alone.
  const { page: filtered } = await loggedIn(t, 'firefox-events-filtered', '#/events?provider=github')
  await filtered.waitForSelector(`${rows}`)
  const shown = await filtered.$$eval(rows, (trs) => trs.map((tr) => Array.from(tr.cells, (c) => c.textContent)))
  t.equal(shown.length, 1, 'one GitHub event')
  t.equal(shown[0]?.[2], 'github', 'its provider')
  t.equal(await filtered.$eval('input[name="provider"]', (input) => (input as HTMLInputElement).value), 'github', 'the form shows the URL\'s filter')
  t.same(pageErrors(errors), [])
})

t.test('an event holding markup shows it as text and runs none of it; its replay shows the result in place', async (t) => {
  // Flagged to fail while the switch is on, so the replay has something to change.
  const signed = signRequest('stripe', {
    body: { id: 'evt_firefox_xss', object: 'event', type: 'customer.updated', fail: true, data: { object: { name: XSS[0], note: XSS[1] } } },
    secret: STRIPE_SECRET
  })
  t.equal((await fetch(`${base}/webhooks/stripe`, { method: 'POST', headers: signed.headers, body: signed.body })).status, 202)
  await eventually('(adminGet<{ items: unknown[] }>(\'/events?status=failed&type=customer.…', async () => (await adminGet<{ items: unknown[] }>('/events?status=failed&type=customer.updated')).items.length === 1)
  const [event] = (await adminGet<{ items: Array<{ id: string }> }>('/events?type=customer.updated')).items

  const { page, errors } = await loggedIn(t, 'firefox-event-xss-replayed', `#/events/${encodeURIComponent(event?.id ?? '')}`)
  let dialogs = 0
  page.on('dialog', (dialog) => { dialogs++; void dialog.dismiss() })
  const payload = await textOf(page, '[data-testid="payload"]')
  for (const markup of XSS) t.ok(payload?.includes(JSON.stringify(markup).slice(1, -1)), `${markup} shows as characters`)
  t.equal(await page.$$eval('main img, main script', (found) => found.length), 0, 'no element made from the payload')
  t.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'nothing of it ran')
  t.equal(await textOf(page, '[data-testid="event-status"]'), 'failed')

  rmSync(failSwitch)
  await page.locator('.actions ::-p-aria(Replay[role="button"])').click()
  t.match(await textOf(page, '.actions [role="status"]'), /^Replayed: /, 'the replay answers in place')
  await page.waitForFunction(() => document.querySelector('[data-testid="event-status"]')?.textContent === 'done')
  t.pass('and the event turns done on the page')
  t.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'still nothing ran')
  t.equal(dialogs, 0)
  t.same(pageErrors(errors), [])
})

t.test('the endpoints page creates an endpoint and shows its secret once', async (t) => {
  const { page, errors } = await loggedIn(t, 'firefox-endpoints', '#/endpoints')
  await page.locator('::-p-aria(Add endpoint[role="button"])').click()
  await page.waitForSelector('form[aria-label="New endpoint"]')
  await page.locator('input[name="url"]').fill('http://127.0.0.1:9/firefox-hook')
  await page.locator('input[name="description"]').fill(XSS[1] as string)
  await page.locator('::-p-aria(Create endpoint[role="button"])').click()
  t.match(await textOf(page, '[data-testid="secret"]'), /^whsec_[A-Za-z0-9+/=]+$/, 'the new secret, shown once')
  await page.locator('::-p-aria(I have copied it[role="button"])').click()
  await page.waitForSelector('[data-testid="secret"]', { hidden: true })
  t.equal(await page.$('[data-testid="secret"]'), null, 'and gone once dismissed')
  const endpoint = await textOf(page, '[data-testid="endpoint"]')
  t.ok(endpoint?.includes('http://127.0.0.1:9/firefox-hook'), 'the endpoint is listed')
  t.ok(endpoint?.includes(XSS[1] as string), 'its description shows as characters')
  const [listed] = (await adminGet<{ items: Array<{ url: string }> }>('/endpoints')).items
  t.equal(listed?.url, 'http://127.0.0.1:9/firefox-hook', 'created through the admin API')
  t.same(pageErrors(errors), [])
})
