/**
 * Every page of the console (test/helpers/visual.ts's CONSOLE_PAGES) in one Chromium against a real `anvil serve`
 * and `anvil worker` with records on each (events done, failed and dead-lettered; tenant endpoints that answer and
 * that fail, a hand retry, an operational endpoint, a catalog): at 390, 860 and 1280 px, light and dark (the
 * console follows the system's mode), nothing spills sideways, no word breaks, no serious axe-core violation; and
 * by keyboard alone Tab reaches every action, each with a visible focus ring. One page is reused throughout: a
 * route is a hash change. `npm run screenshots` takes docs/images/console-*.png from here.
 */
import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { signRequest } from '../../src/testing/sign-request.js'
import { consoleErrors, openBrowser } from '../helpers/browser.js'
import { pageErrors, startConsoleServer, STRIPE_SECRET, TOKEN, type ConsoleServer } from '../helpers/console.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { INVOICE_PAID, portalAdmin } from '../helpers/portal.js'
import { eventually } from '../helpers/eventually.js'
import { CONSOLE_PAGES, MODES, checkPages, keyboardGaps, routeOf, seedOutgoing, setMode, showRoute, type Mode } from '../helpers/visual.js'

t.setTimeout(420_000)
let server: ConsoleServer
let page: Page
let errors: string[]
beforeStep(t, async () => {
  server = await startConsoleServer(t)
  const context = await openBrowser(t)
  page = await context.newPage()
  errors = consoleErrors(page)
})
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  res.statusCode = req.url.startsWith('/down') ? 500 : 200
  res.end(req.url.startsWith('/down') ? 'down for maintenance' : 'thanks, got it')
}), async (receiver) => await receiver.close())

const ids: Record<string, string> = {}
beforeStep(t, async () => {
  const admin = portalAdmin(server.base, TOKEN)
  Object.assign(ids, await seedOutgoing(admin, receiver.url, INVOICE_PAID))
  await admin.send('POST', '/operational-endpoints', { url: `${receiver.url}/ops/alerts`, eventTypes: ['endpoint.failing', 'message.exhausted'] })
  await server.sendStripe('evt_visual_paid', 'invoice.paid', { amount: 4200, currency: 'eur' })
  await server.sendGithub('opened')
  // At the top level, for the test handler to see: fail: true fails (a retry waits), dead: true dead-letters.
  for (const [id, type, flag] of [['evt_visual_failed', 'invoice.payment_failed', 'fail'], ['evt_visual_dead', 'charge.dispute.created', 'dead']] as const) {
    const signed = signRequest('stripe', { body: { id, object: 'event', type, [flag]: true }, secret: STRIPE_SECRET })
    const res = await fetch(`${server.base}/webhooks/stripe`, { method: 'POST', headers: signed.headers, body: signed.body })
    if (res.status !== 202) throw new Error(`${id}: ${res.status}`)
  }
  await eventually('the four events handled', async () =>
    (await admin.get<{ items: unknown[] }>('/events?status=done,failed,dead')).items.length >= 4)
  ids.event = 'evt_visual_failed'
})

/** Each page (the entry pages, or the others) at each width in the page's current mode. */
async function everyPage (t: Test, mode: Mode, entry: boolean): Promise<void> {
  await checkPages(t, page, CONSOLE_PAGES.filter((p) => (p.entry === true) === entry), ids, mode)
}

t.test('logged out: the login page fits and passes axe-core at every width, in light and dark', async (t) => {
  await page.goto(`${server.base}/admin/console/`)
  for (const mode of MODES) {
    await setMode(page, mode)
    await everyPage(t, mode, true)
  }
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
})

t.test('every page at 390, 860 and 1280 px, in light and dark: no sideways overflow, no broken word, no serious axe-core violation', async (t) => {
  for (const mode of MODES) {
    await setMode(page, mode)
    await everyPage(t, mode, false)
  }
  await setMode(page, 'light')
  t.same(pageErrors(errors), [], 'no error in the browser\'s console')
})

t.test('by keyboard alone: on every page Tab reaches every action, and each shows where the focus is', async (t) => {
  await page.setViewportSize({ width: 1280, height: 900 })
  for (const mode of MODES) {
    await setMode(page, mode)
    for (const shown of CONSOLE_PAGES.filter((p) => p.entry !== true)) {
      await showRoute(page, routeOf(shown, ids), shown.heading)
      const { unreached, unseen } = await keyboardGaps(page)
      t.same(unreached, [], `${shown.name}, ${mode}: every action reached by Tab`)
      t.same(unseen, [], `${shown.name}, ${mode}: the focus always visible`)
    }
  }
  await setMode(page, 'light')
  t.same(pageErrors(errors), [])
})
