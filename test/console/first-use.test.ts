/**
 * The console as someone trying it for the first time meets it, in a real Chromium at 1280 px against a real
 * `anvil serve` and `anvil worker` (test/helpers/console.ts) with real Redis, PostgreSQL and HTTP receivers: no
 * error in the browser's console logged out or in, no word broken mid-word, plurals, the chart's axes and legend,
 * rotation behind a confirmation with the secret beside its endpoint, tenants, message links, the provider's
 * event ids, and the undelivered view's retry.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import { midWordBreaks, screenshot } from '../helpers/browser.js'
import { signRequest } from '../../src/testing/sign-request.js'
import { settled, startConsole, STRIPE_SECRET, TOKEN, type ConsoleHarness } from '../helpers/console.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

t.setTimeout(300_000)
let { base, context, sendStripe, sendPlain, adminGet, adminPost, newPage, loggedIn, checkAccessible } = {} as ConsoleHarness
beforeStep(t, async () => { ({ base, context, sendStripe, sendPlain, adminGet, adminPost, newPage, loggedIn, checkAccessible } = await startConsole(t)) })
beforeStep(t, async () => await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base }))

/** Paths the receiver answers 500 on, until a test takes them out. */
const broken = new Set(['/undelivered'])
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  res.statusCode = broken.has(req.url) ? 500 : 200
  res.end(res.statusCode === 200 ? 'ok' : 'down')
}), async (receiver) => await receiver.close())

interface Endpoint { id: string, url: string, tenant: string | null }
interface Delivery { id: string, messageId: string, status: string }
const deliveries = async (endpoint: string): Promise<Delivery[]> =>
  (await adminGet<{ items: Delivery[] }>(`/deliveries?endpoint=${endpoint}&limit=100`)).items

// The data every page below shows: inbound events (one with no provider's id), a dead letter, endpoints, deliveries.
let failing: Endpoint
let failingMessage: string
beforeStep(t, async () => {
  await sendStripe('evt_first_use_paid', 'invoice.paid', { amount: 4200 })
  await sendPlain({ hello: 'no event id here' })
  // Flagged for the handler to dead-letter while its fail switch is on (test/fixtures/console-handler.mjs).
  const dead = signRequest('stripe', { body: { id: 'evt_first_use_dead', object: 'event', type: 'charge.dispute.created', dead: true }, secret: STRIPE_SECRET })
  if ((await fetch(`${base}/webhooks/stripe`, { method: 'POST', headers: dead.headers, body: dead.body })).status !== 202) throw new Error('the dead letter was refused')
  await eventually('(adminGet<{ items: unknown[] }>(\'/events?status=done,dead\')).items.le…', async () => (await adminGet<{ items: unknown[] }>('/events?status=done,dead')).items.length === 3)
  failing = await adminPost<Endpoint>('/endpoints', { url: `${receiver.url}/undelivered`, description: 'fails until fixed' })
  failingMessage = (await adminPost<{ messageId: string }>(`/endpoints/${failing.id}/test`)).messageId
})

t.test('a first visit logs nothing in the browser\'s console and makes no failed request, logged out and then logged in', async (t) => {
  await context.clearCookies()
  const { page, errors } = await newPage(t, 'first-visit')
  const failed: string[] = []
  page.on('response', (response) => { if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`) })
  await page.goto(`${base}/admin/console/`)
  await page.getByLabel('Admin token').waitFor()
  await settled(page)
  t.same(errors, [], 'logged out: no error in the console')
  t.same(failed, [], 'logged out: no failed request (the session probe answers 200)')
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
  await settled(page)
  await page.reload()
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
  await settled(page)
  t.same(errors, [], 'logged in, and reloaded: no error in the console')
  t.same(failed, [])
})

t.test('the events list shows the provider\'s event id and the type, never the journal\'s 64-hex key', async (t) => {
  const { page, errors } = await loggedIn(t, 'first-use-events')
  await page.goto(`${base}/admin/console/#/events`)
  const rows = page.locator('table.events tbody tr')
  await rows.nth(1).waitFor()
  const table = await page.locator('table.events').innerText()
  t.notMatch(table, /[0-9a-f]{64}/, 'no 64-hex key in the list')
  t.match(await rows.filter({ hasText: 'evt_first_use_paid' }).innerText(), /invoice\.paid\s+evt_first_use_paid/, 'the type, then the provider\'s id')
  const plain = rows.filter({ hasText: 'plain' })
  t.match(await plain.innerText(), /untyped event\s+none/, 'an event with neither says so')
  await plain.getByRole('link', { name: 'untyped event' }).click()
  await page.getByTestId('payload').waitFor()
  t.match(await page.getByTestId('payload').textContent(), /no event id here/, 'the type opens the event')
  t.notMatch(await page.getByRole('heading', { level: 1 }).innerText(), /[0-9a-f]{64}/, 'its heading holds no key either')
  t.same(errors, [])
})

t.test('plurals: one of a thing is singular', async (t) => {
  const { page, errors } = await loggedIn(t, 'first-use-plurals')
  await page.goto(`${base}/admin/console/#/dead-letters`)
  await page.locator('caption', { hasText: /^1 dead letter$/ }).waitFor()
  await page.goto(`${base}/admin/console/#/events?provider=stripe&status=done`)
  await page.locator('caption', { hasText: /^1 event$/ }).waitFor()
  await page.getByRole('button', { name: 'Replay all matching…' }).click()
  t.equal(await page.locator('#confirm-text').textContent(), 'Replay 1 event matched by this filter?')
  t.equal(await page.getByRole('button', { name: 'Replay 1 event', exact: true }).count(), 1)
  await page.getByRole('button', { name: 'Cancel' }).click()
  await page.goto(`${base}/admin/console/#/endpoints`)
  await page.getByTestId('endpoint-count').getByText('1 endpoint', { exact: true }).waitFor()
  // One test message to an endpoint that takes it: one delivery.
  const taking = await adminPost<Endpoint>('/endpoints', { url: `${receiver.url}/plural` })
  await adminPost(`/endpoints/${taking.id}/test`)
  await eventually('(deliveries(taking.id)).some((d) => d.status === \'success\')', async () => (await deliveries(taking.id)).some((d) => d.status === 'success'))
  await page.goto(`${base}/admin/console/#/deliveries?endpoint=${taking.id}`)
  await page.locator('caption', { hasText: /^1 delivery$/ }).waitFor()
  t.pass('1 dead letter, 1 event, 1 endpoint, 1 delivery')
  t.same(errors, [])
})

t.test('the per-minute chart has a count axis, a time axis and a legend', async (t) => {
  const { page, errors } = await loggedIn(t, 'first-use-chart')
  const chart = page.locator('figure.chart')
  await chart.locator('rect').first().waitFor()
  const counts = await chart.getByTestId('count-axis').locator('text').allTextContents()
  t.equal(counts[0], '0', 'the count axis starts at 0')
  t.ok(counts.some((label) => /^[1-9]\d*$/.test(label)), `and reaches the peak: ${counts.join(' ')}`)
  t.ok(counts.includes('events'), 'named')
  const times = (await chart.getByTestId('time-axis').locator('text').allTextContents()).filter((label) => /^\d\d:\d\d$/.test(label))
  t.ok(times.length >= 6, `the time axis labels the minutes: ${times.join(' ')}`)
  t.same(await chart.getByRole('list', { name: 'Legend' }).getByRole('listitem').allInnerTexts(), ['done', 'received', 'processing', 'failed', 'dead'])
  await checkAccessible(t, page, 'overview with its chart')
  t.same(errors, [])
})

/** The endpoint page of `endpoint`, opened from the list. */
async function openEndpoint (page: Page, endpoint: Endpoint): Promise<void> {
  await page.goto(`${base}/admin/console/#/endpoints`)
  await page.getByTestId('endpoint').filter({ hasText: endpoint.url }).getByRole('link', { name: endpoint.url }).click()
  await page.getByRole('heading', { level: 1, name: endpoint.url }).waitFor()
  await settled(page)
}

t.test('rotate asks first, with a choice of grace period; the new secret shows where it was rotated, with a copy button', async (t) => {
  const { page, errors } = await loggedIn(t, 'first-use-rotate')
  const rotations: string[] = []
  page.on('request', (request) => { if (request.url().endsWith('/rotate-secret')) rotations.push(request.postData() ?? '') })
  await openEndpoint(page, failing)
  const section = page.getByRole('region', { name: 'Signing secret' })
  await section.getByRole('button', { name: 'Rotate secret…' }).click()
  const confirm = section.getByRole('alertdialog')
  await confirm.waitFor()
  await checkAccessible(t, page, 'a rotation to confirm')
  await confirm.getByRole('button', { name: 'Cancel' }).click()
  t.equal(await confirm.count(), 0, 'cancelled')
  t.same(rotations, [], 'nothing rotated without a confirmation')

  await section.getByRole('button', { name: 'Rotate secret…' }).click()
  await confirm.getByRole('combobox', { name: 'Grace period' }).selectOption({ label: '1 hour' })
  await confirm.getByRole('button', { name: 'Rotate now' }).click()
  const secret = section.getByTestId('secret')
  await secret.waitFor()
  t.match(await secret.textContent(), /^whsec_[A-Za-z0-9+/=]+$/, 'the new secret, in the endpoint\'s secret section')
  t.same(rotations.map((body) => JSON.parse(body)), [{ graceSeconds: 3600 }], 'one rotation, with the chosen grace')
  await section.getByRole('button', { name: 'Copy the secret' }).click()
  await section.getByText('Copied', { exact: true }).waitFor()
  t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), await secret.textContent(), 'the copy button copies it')
  await screenshot(page, 'console-rotated-secret')
  await section.getByRole('button', { name: 'Hide' }).click()
  t.equal(await page.getByTestId('secret').count(), 0, 'and it is hidden again')
  t.same(errors, [])
})

t.test('an endpoint\'s tenant is set when it is made, shown, changed and taken away', async (t) => {
  const { page, errors } = await loggedIn(t, 'first-use-tenant')
  await page.goto(`${base}/admin/console/#/endpoints`)
  await page.getByRole('button', { name: 'Add endpoint' }).click()
  await page.getByLabel('URL', { exact: true }).fill(`${receiver.url}/tenant`)
  await page.getByLabel('Tenant (optional)').fill('acme')
  await page.getByRole('button', { name: 'Create endpoint' }).click()
  await page.getByTestId('secret').waitFor()
  await page.getByRole('button', { name: 'I have copied it' }).click()
  const card = page.getByTestId('endpoint').filter({ hasText: `${receiver.url}/tenant` })
  t.equal(await card.getByTestId('tenant').innerText(), 'acme', 'shown')
  const made = (await adminGet<{ items: Endpoint[] }>('/endpoints?tenant=acme')).items
  t.match(made, [{ url: `${receiver.url}/tenant`, tenant: 'acme' }], 'set through the API')

  await openEndpoint(page, made[0] as Endpoint)
  await page.getByLabel('Tenant (empty: none)').fill('globex')
  await page.getByRole('button', { name: 'Save tenant' }).click()
  await page.getByText('Tenant saved').waitFor()
  await page.getByTestId('tenant').getByText('globex').waitFor()
  t.equal((await adminGet<Endpoint>(`/endpoints/${made[0]?.id ?? ''}`)).tenant, 'globex', 'changed')
  await page.getByTestId('tenant').getByRole('link', { name: 'globex' }).click()
  await page.getByTestId('endpoint-count').getByText('1 endpoint of tenant globex').waitFor()
  await page.getByRole('link', { name: 'Every tenant' }).click()
  await openEndpoint(page, made[0] as Endpoint)
  await page.getByLabel('Tenant (empty: none)').fill('')
  await page.getByRole('button', { name: 'Save tenant' }).click()
  await page.getByTestId('tenant').getByText('none').waitFor()
  t.equal((await adminGet<Endpoint>(`/endpoints/${made[0]?.id ?? ''}`)).tenant, null, 'taken away')
  t.same(errors, [])
})

t.test('a delivery\'s message is a link to the message, its data and its deliveries', async (t) => {
  await eventually('(deliveries(failing.id)).length >= 1', async () => (await deliveries(failing.id)).length >= 1)
  const { page, errors } = await loggedIn(t, 'first-use-message')
  await page.goto(`${base}/admin/console/#/deliveries?endpoint=${failing.id}`)
  await page.getByTestId('delivery').first().getByRole('link', { name: failingMessage }).click()
  await page.waitForURL(new RegExp(`#/messages/${failingMessage}$`))
  await page.getByRole('heading', { level: 1, name: `Message ${failingMessage}` }).waitFor()
  await page.getByTestId('message-status').waitFor()
  t.match(await page.locator('.facts').innerText(), /Type\s+anvil\.test/, 'its type')
  t.ok(await page.getByTestId('delivery').count() >= 1, 'its deliveries')
  t.match(await page.getByTestId('payload').textContent(), /\{/, 'its data, as text')
  await checkAccessible(t, page, 'one message')
  t.same(errors, [])
})

t.test('undelivered: a row\'s Retry sends the message to its endpoint again, which now takes it', async (t) => {
  // Both attempts failed (at once and 5 s later): nothing more is tried for minutes, so a success is the retry's.
  await eventually('(deliveries(failing.id)).filter((d) => d.status === \'failed\').length …', async () => (await deliveries(failing.id)).filter((d) => d.status === 'failed').length === 2, 120000)
  broken.delete('/undelivered')
  const got = receiver.received.length
  const { page, errors } = await loggedIn(t, 'first-use-undelivered-retry')
  await page.goto(`${base}/admin/console/#/undelivered`)
  await settled(page)
  await page.getByRole('button', { name: `Retry message ${failingMessage} to endpoint ${failing.id}` }).click()
  await page.getByText('retry queued').waitFor()
  await eventually('(deliveries(failing.id)).some((d) => d.status === \'success\')', async () => (await deliveries(failing.id)).some((d) => d.status === 'success'))
  t.ok(receiver.received.slice(got).some((r) => r.url === '/undelivered' && r.headers['webhook-id'] === failingMessage), 'the receiver got the message again')
  await page.reload()
  await page.getByText('0 messages not yet delivered').waitFor()
  t.same(errors, [])
})

/** Every page, with data on it. */
async function everyPage (): Promise<Array<[string, string]>> {
  const [event] = (await adminGet<{ items: Array<{ id: string }> }>('/events?provider=stripe&status=done')).items
  const pages: Array<[string, string]> = [
    ['Overview', '#/'], ['Events', '#/events'], ['One event', `#/events/${encodeURIComponent(event?.id ?? '')}`],
    ['Dead letters', '#/dead-letters'], ['Endpoints', '#/endpoints'], ['Deliveries', '#/deliveries'],
    ['Undelivered', '#/undelivered'], ['One message', `#/messages/${failingMessage}`]
  ]
  return pages.map(([name, hash]) => [name, `${base}/admin/console/${hash}`])
}

t.test('no page breaks a word in two at 1280 px: buttons, dates, ids and types stay whole', async (t) => {
  const { page, errors } = await loggedIn(t, 'first-use-words')
  t.equal(page.viewportSize()?.width, 1280)
  for (const [name, url] of await everyPage()) {
    await page.goto(url)
    await page.locator('main h1').waitFor()
    await settled(page)
    t.same(await midWordBreaks(page), [], `${name}: no word broken`)
  }
  t.same(errors, [])
})
