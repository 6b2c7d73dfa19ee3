/**
 * Every page of the tenant portal (test/helpers/visual.ts's PORTAL_PAGES) in one Chromium against a real `anvil
 * serve` and `anvil worker` with tenant acme's records (an endpoint that answers, one that fails and was retried by
 * hand, one with a long URL, a catalog): at 390, 860 and 1280 px, opened with a light link and with a dark one
 * (the link's theme), nothing spills sideways, no word breaks, no serious axe-core violation (WCAG AA contrast
 * among its rules); and by keyboard alone Tab reaches every action, each with a visible focus ring. One page is
 * reused throughout: a route is a hash change. `npm run screenshots` takes docs/images/portal-*.png from here.
 */
import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { consoleErrors, openBrowser } from '../helpers/browser.js'
import { pageErrors, settled, startConsoleServer, TOKEN, type ConsoleServer } from '../helpers/console.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { INVOICE_PAID, portalAdmin, type AdminClient } from '../helpers/portal.js'
import { MODES, PORTAL_PAGES, WIDTHS, checkFits, checkPages, docsShot, keyboardGaps, routeOf, seedOutgoing, showRoute, type Mode } from '../helpers/visual.js'

t.setTimeout(420_000)
let server: ConsoleServer
let admin: AdminClient
let page: Page
let errors: string[]
beforeStep(t, async () => {
  server = await startConsoleServer(t)
  admin = portalAdmin(server.base, TOKEN)
  page = await (await openBrowser(t)).newPage()
  errors = consoleErrors(page)
})
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  res.statusCode = req.url.startsWith('/down') ? 500 : 200
  res.end(req.url.startsWith('/down') ? 'down for maintenance' : 'thanks, got it')
}), async (receiver) => await receiver.close())

const ids: Record<string, string> = {}
beforeStep(t, async () => { Object.assign(ids, await seedOutgoing(admin, receiver.url, INVOICE_PAID)) })

/** The portal opened in the page with a new link of tenant acme, light or dark. */
async function openWithLink (mode: Mode): Promise<void> {
  const link = await admin.send<{ url: string }>('POST', '/portal/tokens', { tenant: 'acme', ...(mode === 'dark' ? { theme: { mode, primaryColor: '#a5b4fc' } } : {}) })
  // A new document: the link's fragment alone would be a same-document navigation, which the page reads no token from.
  await page.goto('about:blank')
  await page.goto(link.url)
  await page.getByRole('navigation', { name: 'Sections' }).waitFor()
  await page.waitForFunction((mode) => document.documentElement.dataset.theme === mode, mode)
  await settled(page)
}

t.test('without a link: the page that says so fits and passes axe-core at every width', async (t) => {
  const [entry] = PORTAL_PAGES.filter((p) => p.entry === true)
  if (entry === undefined) throw new Error('PORTAL_PAGES has no entry page')
  await page.goto(`${server.base}/admin/portal/`)
  await page.getByTestId('no-access').waitFor()
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 })
    await checkFits(t, page, `${entry.name} at ${width} px`)
  }
  await docsShot(page, entry.name)
  t.same(pageErrors(errors), [], 'no error in the browser\'s console')
})

/** Each page but the entry at each width. */
async function everyPage (t: Test, mode: Mode): Promise<void> {
  await checkPages(t, page, PORTAL_PAGES.filter((p) => p.entry !== true), ids, mode)
}

t.test('every page at 390, 860 and 1280 px, with a light link and a dark one: no sideways overflow, no broken word, no serious axe-core violation', async (t) => {
  for (const mode of MODES) {
    await openWithLink(mode)
    await everyPage(t, mode)
  }
  t.same(pageErrors(errors), [], 'no error in the browser\'s console')
})

t.test('by keyboard alone: on every page Tab reaches every action, and each shows where the focus is', async (t) => {
  await page.setViewportSize({ width: 1280, height: 900 })
  for (const mode of MODES) {
    await openWithLink(mode)
    for (const shown of PORTAL_PAGES.filter((p) => p.entry !== true)) {
      await showRoute(page, routeOf(shown, ids), shown.heading)
      const { unreached, unseen } = await keyboardGaps(page)
      t.same(unreached, [], `${shown.name}, ${mode}: every action reached by Tab`)
      t.same(unseen, [], `${shown.name}, ${mode}: the focus always visible`)
    }
  }
  t.same(pageErrors(errors), [])
})
