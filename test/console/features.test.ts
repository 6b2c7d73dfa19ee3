/**
 * The console catches up with the portal (issue 36, contract 6), in a real Chromium against admin APIs of a real
 * Fastify app: it asks only for the route families the server has (an admin API with outgoing webhooks and no
 * journal makes no journal call, and one with the journal alone no outgoing-webhook call: every request counted,
 * none answered 4xx), shows only their sections and says on the overview what is not configured; the operational
 * endpoints have a page (made with the operational types, changed, removed); and "portal link for tenant …" mints a
 * link that opens that tenant's portal.
 */
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import type { AddressInfo } from 'node:net'
import type { BrowserContext, Page } from 'playwright-core'
import anvilAdmin, { type AnvilAdminOptions } from '../../plugins/admin/admin.js'
import { journalAdminRoutes } from '../../plugins/journal/admin-routes.js'
import { openEventLog } from '../../src/event-log/open-event-log.js'
import { consoleErrors, openBrowser, screenshot } from '../helpers/browser.js'
import { settled } from '../helpers/console.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { portalAdmin, type AdminClient } from '../helpers/portal.js'

t.setTimeout(240_000)
const TOKEN = 'console-features-admin-token-0123456789'
const fixture = outboundFixture()

/** An admin API alone on a port of its own, closed at the end. */
async function adminApp (options: Omit<AnvilAdminOptions, 'token'>): Promise<string> {
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, ...options })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => await app.close())
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

let outboundOnly: string, journalOnly: string, admin: AdminClient
let context: BrowserContext
beforeStep(t, async () => {
  outboundOnly = await adminApp({ outbound: fixture.open() })
  // The journal's routes over the dead letters in Redis (anvil serve's without a database), and no outgoing webhooks.
  journalOnly = await adminApp({ routes: [journalAdminRoutes(openEventLog({ redis: fixture.redis.url }))] })
  admin = portalAdmin(outboundOnly, TOKEN)
  context = await openBrowser(t)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: outboundOnly })
})

const JOURNAL = /^\/admin\/(events|stats|dead-letters)\b/
const OUTBOUND = /^\/admin\/(endpoints|endpoint-stats|deliveries|messages|undelivered|outbox|event-types|operational-endpoints|portal\/tokens)\b/

/** The console of `base`, logged in; every API request it makes (not its own files) recorded with its status. */
async function consoleOf (t: Test, base: string, name: string): Promise<{ page: Page, calls: string[], errors: string[] }> {
  const page = await context.newPage()
  const errors = consoleErrors(page)
  t.teardown(async () => { await screenshot(page, name); await page.close() })
  const calls: string[] = []
  page.on('response', (response) => {
    const { pathname, search } = new URL(response.url())
    if (pathname.startsWith('/admin/') && !pathname.startsWith('/admin/console/') && !pathname.startsWith('/admin/portal/')) {
      calls.push(`${response.request().method()} ${pathname}${search} ${response.status()}`)
    }
  })
  await page.goto(`${base}/admin/console/`)
  // A session of this browser on that origin may be open already.
  const token = page.getByLabel('Admin token')
  await token.or(page.getByRole('heading', { level: 1, name: 'Overview' })).first().waitFor()
  if (await token.isVisible()) {
    await token.fill(TOKEN)
    await page.getByRole('button', { name: 'Log in' }).click()
  }
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
  await settled(page)
  return { page, calls, errors }
}

/** Every section of the navigation opened in turn, and the overview again. */
async function visitEverySection (page: Page): Promise<string[]> {
  const nav = page.getByRole('navigation', { name: 'Sections' })
  const labels = await nav.getByRole('link').allInnerTexts()
  for (const label of [...labels.slice(1), labels[0] as string]) {
    await nav.getByRole('link', { name: label, exact: true }).click()
    await page.locator('main h1').first().waitFor()
    await settled(page)
  }
  return labels
}

t.test('no journal: no journal call and no 4xx, only the outgoing sections, and the overview says the journal is not configured', async (t) => {
  const { page, calls, errors } = await consoleOf(t, outboundOnly, 'features-no-journal')
  t.same(await visitEverySection(page), ['Overview', 'Endpoints', 'Operational', 'Deliveries', 'Undelivered', 'Event types'], 'the sections it has')
  t.match(await page.getByRole('region', { name: 'Inbound events' }).innerText(), /Not configured/, 'the overview says so')
  // A shared link into a section the server lacks: the page says so and asks nothing.
  await page.goto(`${outboundOnly}/admin/console/#/events`)
  await page.getByTestId('not-configured').waitFor()
  t.ok(calls.some((call) => OUTBOUND.test(call.split(' ')[1] ?? '')), `it asked for the outgoing side: ${calls.length} calls`)
  t.same(calls.filter((call) => JOURNAL.test(call.split(' ')[1] ?? '')), [], 'no journal route asked for')
  t.same(calls.filter((call) => !/ [23]\d\d$/.test(call)), [], 'no call answered 4xx or 5xx')
  t.same(errors, [], 'no error in the browser\'s console')
})

t.test('the journal alone: no outgoing-webhook call and no 4xx, only the journal\'s sections, and no portal link', async (t) => {
  const { page, calls, errors } = await consoleOf(t, journalOnly, 'features-journal-only')
  t.same(await visitEverySection(page), ['Overview', 'Events', 'Dead letters'], 'the sections it has')
  t.match(await page.getByRole('region', { name: 'Outgoing webhooks' }).innerText(), /Not configured/, 'the overview says so')
  await page.goto(`${journalOnly}/admin/console/#/endpoints`)
  await page.getByTestId('not-configured').waitFor()
  t.equal(await page.getByRole('button', { name: /^Portal link/ }).count(), 0, 'no portal link without portal links')
  t.ok(calls.some((call) => JOURNAL.test(call.split(' ')[1] ?? '')), `it asked for the journal: ${calls.length} calls`)
  t.same(calls.filter((call) => OUTBOUND.test(call.split(' ')[1] ?? '')), [], 'no outgoing-webhook route asked for')
  t.same(calls.filter((call) => !/ [23]\d\d$/.test(call)), [], 'no call answered 4xx or 5xx')
  t.same(errors, [])
})

interface Endpoint { id: string, url: string, eventTypes: string[] }

t.test('operational endpoints: a page of their own, made with the operational types, changed and removed', async (t) => {
  const { page, errors } = await consoleOf(t, outboundOnly, 'features-operational')
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Operational' }).click()
  await page.getByRole('heading', { level: 1, name: 'Operational endpoints' }).waitFor()
  await page.getByRole('button', { name: 'Add endpoint' }).click()
  const form = page.getByRole('form', { name: 'New operational endpoint' })
  // evaluateAll reads what is rendered now: the form's list comes in one render, so its first box means all of it.
  await form.getByRole('checkbox').first().waitFor()
  t.same(await form.getByRole('checkbox').evaluateAll((boxes) => boxes.map((box) => (box as HTMLInputElement).value)),
    ['endpoint.disabled', 'endpoint.failing', 'endpoint.recovered', 'message.exhausted', 'inbound.dead_lettered'], 'the operational types, nothing of the catalog')
  t.equal(await form.getByLabel('Tenant (optional)').count(), 0, 'no tenant')
  await form.getByLabel('URL').fill('https://alerts.example.com/anvil')
  await form.getByRole('checkbox', { name: /endpoint\.disabled/ }).check()
  await form.getByRole('checkbox', { name: /message\.exhausted/ }).check()
  await form.getByRole('button', { name: 'Create endpoint' }).click()
  t.match(await page.getByTestId('secret').textContent(), /^whsec_/, 'its secret, shown once')
  await page.getByRole('button', { name: 'I have copied it' }).click()
  const [made] = (await admin.get<{ items: Endpoint[] }>('/operational-endpoints')).items
  t.match(made, { url: 'https://alerts.example.com/anvil', eventTypes: ['endpoint.disabled', 'message.exhausted'] }, 'made as an operational endpoint')
  t.same((await admin.get<{ items: Endpoint[] }>('/endpoints')).items.filter((e) => e.id === made?.id), [], 'not among the endpoints')

  await page.getByTestId('endpoint').getByRole('link', { name: 'https://alerts.example.com/anvil' }).click()
  await page.getByRole('heading', { level: 1, name: 'https://alerts.example.com/anvil' }).waitFor()
  await settled(page)
  t.match(await page.locator('.meta').innerText(), /operational/, 'it says what it is')
  const subscriptions = page.getByRole('form', { name: 'Subscriptions' })
  t.equal(await subscriptions.getByRole('checkbox').count(), 5, 'its subscriptions: the operational types')
  await subscriptions.getByRole('checkbox', { name: /message\.exhausted/ }).uncheck()
  await subscriptions.getByRole('button', { name: 'Save subscriptions' }).click()
  await subscriptions.getByText('Subscriptions saved').waitFor()
  t.same((await admin.get<{ items: Endpoint[] }>('/operational-endpoints')).items[0]?.eventTypes, ['endpoint.disabled'], 'changed')
  await page.getByRole('button', { name: 'Remove…' }).click()
  await page.getByRole('group', { name: 'Confirm removing this endpoint' }).getByRole('button', { name: 'Remove', exact: true }).click()
  await page.getByRole('heading', { level: 1, name: 'Operational endpoints' }).waitFor()
  await page.getByTestId('endpoint-count').getByText(/^0 operational endpoints/).waitFor()
  t.same((await admin.get<{ items: Endpoint[] }>('/operational-endpoints')).items, [], 'removed')
  t.same(errors, [])
})

t.test('portal link for tenant …: minted from the tenant\'s endpoints, copied, and it opens that tenant\'s portal, read only when asked', async (t) => {
  await admin.send('POST', '/endpoints', { url: 'https://hooks.acme.example/orders', tenant: 'acme', description: 'Order sync' })
  await admin.send('POST', '/endpoints', { url: 'https://hooks.globex.example/in', tenant: 'globex' })
  const { page, errors } = await consoleOf(t, outboundOnly, 'features-portal-link')
  await page.goto(`${outboundOnly}/admin/console/#/endpoints?tenant=acme`)
  await page.getByTestId('endpoint-count').getByText('1 endpoint of tenant acme').waitFor()
  await page.getByRole('button', { name: 'Portal link for tenant acme…' }).click()
  const form = page.getByRole('form', { name: 'Portal link' })
  await form.getByLabel('Valid for').selectOption({ label: '24 hours' })
  await form.getByRole('checkbox', { name: 'Read only' }).check()
  await form.getByRole('button', { name: 'Mint link' }).click()
  const link = await form.getByTestId('portal-link').innerText()
  t.match(link, new RegExp(`^${outboundOnly}/admin/portal/`), 'a link to the portal page')
  await form.getByRole('button', { name: 'Copy the link' }).click()
  await form.getByText('Copied', { exact: true }).waitFor()
  t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), link, 'copied')

  const portal = await context.newPage()
  t.teardown(async () => await portal.close())
  await portal.goto(link)
  await portal.getByTestId('tenant').getByText('acme (read only)', { exact: false }).waitFor()
  await portal.getByTestId('endpoint').first().waitFor()
  t.same(await portal.getByTestId('endpoint').locator('.endpoint-url').allInnerTexts(), ['https://hooks.acme.example/orders'], 'acme\'s portal, acme\'s endpoint only')
  t.equal(await portal.getByRole('button', { name: 'Add endpoint' }).count(), 0, 'read only: no change offered')
  t.same(errors, [])
})
