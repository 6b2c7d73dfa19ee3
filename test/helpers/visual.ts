/**
 * The visual contract of the console and the portal (issue 36, contract 7), shared by test/console/visual.test.ts,
 * test/portal/visual.test.ts, scripts/screenshots.mjs and test/docs/screenshots.test.ts: every page of each app
 * (PAGES), checked at each width and mode (nothing spills sideways, no word broken, no serious axe-core violation),
 * and reached by keyboard alone (Tab stops on every action, each with a visible focus ring). With
 * ANVIL_SCREENSHOTS=1 (`npm run screenshots`) each page's 1280 px light view is written to docs/images/<name>.png.
 */
import type { Test } from 'tap'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { midWordBreaks, seriousViolations } from './browser.js'
import { settled } from './console.js'
import { ROOT } from './root.js'
import { eventually } from './eventually.js'

export const WIDTHS = [390, 860, 1280] as const
export const MODES = ['light', 'dark'] as const
export type Mode = typeof MODES[number]

/**
 * A page of an app: its route (`:endpoint`, `:message`, `:event` stand for a record the test made), the heading it
 * shows, and its screenshot's name (docs/images/<name>.png). `entry` pages show before a session or link.
 */
export interface AppPage { name: string, route: string, heading: RegExp, entry?: true }

/** Every page of the console (console/src/main.tsx's routes, and the login). */
export const CONSOLE_PAGES: AppPage[] = [
  { name: 'console-login', route: '#/', heading: /^Anvil console$/, entry: true },
  { name: 'console-overview', route: '#/', heading: /^Overview$/ },
  { name: 'console-events', route: '#/events', heading: /^Events$/ },
  { name: 'console-event', route: '#/events/:event', heading: /^invoice\.payment_failed/ },
  { name: 'console-dead-letters', route: '#/dead-letters', heading: /^Dead letters$/ },
  { name: 'console-endpoints', route: '#/endpoints', heading: /^Endpoints$/ },
  { name: 'console-endpoint', route: '#/endpoints/:endpoint', heading: /^https?:\/\// },
  { name: 'console-operational-endpoints', route: '#/operational-endpoints', heading: /^Operational endpoints$/ },
  { name: 'console-deliveries', route: '#/deliveries', heading: /^Deliveries$/ },
  { name: 'console-undelivered', route: '#/undelivered', heading: /^Undelivered$/ },
  { name: 'console-message', route: '#/messages/:message', heading: /^Message / },
  { name: 'console-event-types', route: '#/event-types', heading: /^Event types$/ }
]

/** Every page of the portal (console/src/portal/main.tsx's routes, and the page without a link). */
export const PORTAL_PAGES: AppPage[] = [
  { name: 'portal-no-access', route: '#/', heading: /^No access link$/, entry: true },
  { name: 'portal-endpoints', route: '#/', heading: /^Endpoints$/ },
  { name: 'portal-endpoint', route: '#/endpoints/:endpoint', heading: /^https?:\/\// },
  { name: 'portal-deliveries', route: '#/deliveries', heading: /^Deliveries$/ },
  { name: 'portal-message', route: '#/messages/:message', heading: /^Message / },
  { name: 'portal-event-types', route: '#/event-types', heading: /^Event types$/ },
  { name: 'portal-verify', route: '#/verify', heading: /^Verify in your code$/ }
]

/** docs/images' pictures that are not one page's plain view, each with the test file that takes it. */
export const OTHER_SHOTS: Record<string, string> = {
  'portal-embedded': 'test/portal/frame.test.ts'
}

/** The route with the test's records in place of `:endpoint`, `:message`, `:event`. */
export const routeOf = (page: AppPage, ids: Record<string, string>): string =>
  page.route.replace(/:(\w+)/g, (_, key: string) => encodeURIComponent(ids[key] ?? `missing-${key}`))

/** Whatever spills sideways: the page itself, or a box that clips or scrolls its content. */
export async function overflows (page: Page): Promise<string[]> {
  return await page.evaluate(() => {
    const found: string[] = []
    const root = document.documentElement
    const name = (element: Element): string =>
      `<${element.tagName.toLowerCase()} class="${element.getAttribute('class') ?? ''}"> ${(element.textContent ?? '').trim().slice(0, 40)}`
    if (root.scrollWidth > root.clientWidth + 1) {
      // Named by the outermost boxes that stick out, so a failure says what to fix.
      const out = Array.from(document.body.querySelectorAll('*')).filter((e) => e.getBoundingClientRect().right > root.clientWidth + 1)
      const outermost = out.filter((e) => !out.includes(e.parentElement as Element)).slice(0, 3).map(name)
      found.push(`the page: ${root.scrollWidth} > ${root.clientWidth} (${outermost.join('; ')})`)
    }
    for (const element of document.body.querySelectorAll('*')) {
      const { overflowX } = getComputedStyle(element)
      if ((overflowX === 'auto' || overflowX === 'scroll' || overflowX === 'hidden') && element.scrollWidth > element.clientWidth + 1) {
        found.push(`${name(element)}: ${element.scrollWidth} > ${element.clientWidth}`)
      }
    }
    return found
  })
}

/** The page in light or dark: the system's mode emulated, then waited for until the app follows it (data-theme). */
export async function setMode (page: Page, mode: Mode): Promise<void> {
  await page.emulateMedia({ colorScheme: mode })
  await page.waitForFunction((mode) => document.documentElement.dataset.theme === mode, mode)
}

/** Opens `route` in the page's document (a hash change: the app and axe-core stay loaded) and waits for its heading. */
export async function showRoute (page: Page, route: string, heading: RegExp): Promise<void> {
  await page.evaluate((hash) => { location.hash = hash }, route)
  await page.locator('main h1').filter({ hasText: heading }).first().waitFor()
  await settled(page)
}

/** The three checks of one page as it is now, each an assertion named after `where`. */
export async function checkFits (t: Test, page: Page, where: string): Promise<void> {
  t.same(await overflows(page), [], `${where}: nothing spills sideways`)
  t.same(await midWordBreaks(page), [], `${where}: no word broken`)
  t.same(await seriousViolations(page), [], `${where}: no serious axe-core violation`)
}

/**
 * Tab pressed from the top of the page until every stop came round: the actions (links, buttons, fields,
 * disclosures) Tab never reached, and those it reached with no focus ring to see. A `focusin` listener records
 * each stop, so a press costs one round trip.
 */
export async function keyboardGaps (page: Page): Promise<{ unreached: string[], unseen: string[] }> {
  const count = await page.evaluate(() => {
    const describe = (element: Element): string =>
      `<${element.tagName.toLowerCase()}> ${(element.getAttribute('aria-label') ?? element.textContent ?? '').trim().slice(0, 60) || (element.getAttribute('name') ?? '')}`
    const actions = Array.from(document.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, summary, [tabindex]'))
      .filter((element) => element.tabIndex >= 0 && !(element as HTMLButtonElement).disabled && element.checkVisibility({ visibilityProperty: true }))
    const probe = window as unknown as { tabProbe: { actions: HTMLElement[], stops: Set<HTMLElement>, unseen: string[], describe: typeof describe } }
    const listening = 'tabProbe' in window
    probe.tabProbe = { actions, stops: new Set(), unseen: [], describe }
    if (!listening) document.addEventListener('focusin', (event) => {
      const element = event.target as HTMLElement
      if (probe.tabProbe.stops.has(element)) return
      probe.tabProbe.stops.add(element)
      const style = getComputedStyle(element)
      const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none'
      if (!element.matches(':focus-visible') || !ring) probe.tabProbe.unseen.push(describe(element))
    })
    // From the top: the start of sequential focus navigation is where the selection is.
    ;(document.activeElement as HTMLElement | null)?.blur()
    getSelection()?.collapse(document.body, 0)
    return actions.length
  })
  // Round the page at most twice; checked every 10 presses, so a page whose actions were all reached stops there.
  const left = async (): Promise<number> => await page.evaluate(() => {
    const { actions, stops } = (window as unknown as { tabProbe: { actions: HTMLElement[], stops: Set<HTMLElement> } }).tabProbe
    return actions.filter((element) => !stops.has(element)).length
  })
  for (let pressed = 0; pressed < 2 * count + 10 && await left() > 0; pressed += 10) {
    for (let i = 0; i < 10; i++) await page.keyboard.press('Tab')
  }
  return await page.evaluate(() => {
    const { actions, stops, unseen, describe } = (window as unknown as { tabProbe: { actions: HTMLElement[], stops: Set<HTMLElement>, unseen: string[], describe: (e: Element) => string } }).tabProbe
    return { unreached: actions.filter((element) => !stops.has(element)).map(describe), unseen }
  })
}

/** Each of `pages` at each width, checked as `checkFits` does; the 1280 px light view is the docs' screenshot. */
export async function checkPages (t: Test, page: Page, pages: AppPage[], ids: Record<string, string>, mode: Mode): Promise<void> {
  for (const shown of pages) {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 })
      await showRoute(page, routeOf(shown, ids), shown.heading)
      await checkFits(t, page, `${shown.name} at ${width} px, ${mode}`)
    }
    if (mode === 'light') await docsShot(page, shown.name)
  }
}

/** With ANVIL_SCREENSHOTS=1, the page's view as docs/images/<name>.png (`npm run screenshots`); otherwise nothing. */
export async function docsShot (page: Page, name: string): Promise<void> {
  if (process.env.ANVIL_SCREENSHOTS !== '1') return
  await page.evaluate(() => window.scrollTo(0, 0))
  await page.screenshot({ path: join(ROOT, 'docs', 'images', `${name}.png`) })
}

interface Made { id: string }
interface AdminCalls { send: <T = unknown>(method: string, path: string, body?: object) => Promise<T>, get: <T>(path: string) => Promise<T> }

/**
 * The outgoing records both apps show, made through the admin API: a catalog of two types, tenant acme's endpoint
 * that answers (with a description) and one that fails (its failure retried by hand), a third with a long URL, each
 * sent a test event, all answered. `receiver` answers 500 under /down, 200 elsewhere. Its endpoint and message ids.
 */
export async function seedOutgoing (admin: AdminCalls, receiver: string, schema: object): Promise<{ endpoint: string, message: string }> {
  await admin.send('PUT', '/event-types/invoice.paid', { description: 'An invoice was paid in full.', schema })
  await admin.send('PUT', '/event-types/customer.created', { description: 'A customer signed up.', schema: { type: 'object', properties: { email: { type: 'string', format: 'email' } } } })
  const make = async (path: string, body: object): Promise<Made> => await admin.send<Made>('POST', '/endpoints', { url: `${receiver}${path}`, ...body })
  const orders = await make('/acme/orders', { tenant: 'acme', eventTypes: ['invoice.paid'], description: 'Order sync for the warehouse' })
  const down = await make('/down/acme-crm', { tenant: 'acme', description: 'Legacy CRM bridge' })
  const long = await make('/acme/hooks/a-rather-long-path/for-the-billing-sync/v2?account=acct_1234567890abcdef', { tenant: 'acme' })
  const messages: string[] = []
  for (const endpoint of [orders, down, long]) messages.push((await admin.send<{ messageId: string }>('POST', `/endpoints/${endpoint.id}/test`, {})).messageId)
  type Delivery = { id: string, status: string, trigger: string }
  const attempts = async (id: string): Promise<Delivery[]> => (await admin.get<{ items: Delivery[] }>(`/deliveries?endpoint=${id}&limit=50`)).items
  const answered = async (): Promise<boolean> => (await Promise.all([orders, down, long].map(async (e) => (await attempts(e.id)).some((d) => d.status !== 'started')))).every(Boolean)
  await eventually('every endpoint\'s test answered', answered)
  const failed = (await attempts(down.id)).find((d) => d.status === 'failed') as Delivery
  await admin.send('POST', `/deliveries/${failed.id}/retry`)
  await eventually('the hand retry answered', async () => (await attempts(down.id)).some((d) => d.trigger === 'retry' && d.status !== 'started'))
  return { endpoint: orders.id, message: messages[0] as string }
}
