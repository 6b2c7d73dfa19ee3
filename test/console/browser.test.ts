/**
 * The console in a real Chromium (test/helpers/browser.ts) against a real `anvil serve` and `anvil worker`,
 * with real Redis and PostgreSQL. Each test ends with a screenshot under .tap/console/ and an axe-core check
 * for serious violations on the pages it visited.
 */
import t from 'tap'
import { rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { signRequest } from '../../src/testing/sign-request.js'
import { pageErrors, settled, startConsole, STRIPE_SECRET, TOKEN, type ConsoleHarness } from '../helpers/console.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'
import { portalAdmin } from '../helpers/portal.js'

/** Markup in a payload, which must show as characters and never run. */
const XSS = ['<script>window.__xss = 1</script>', '"><img src=x onerror="window.__xss = 2">']

let { base, context, failSwitch, sendStripe, sendGithub, adminGet, newPage, loggedIn, checkAccessible } = {} as ConsoleHarness
beforeStep(t, async () => { ({ base, context, failSwitch, sendStripe, sendGithub, adminGet, newPage, loggedIn, checkAccessible } = await startConsole(t)) })

// The receiver of the outgoing webhooks: it records what it gets and answers 200.
const received: Array<{ headers: Record<string, unknown>, body: string }> = []
const receiver = createServer((request, response) => {
  let body = ''
  request.on('data', (chunk: Buffer) => { body += chunk.toString('utf8') })
  request.on('end', () => { received.push({ headers: request.headers, body }); response.end('ok') })
})
let receiverUrl: string
beforeStep(t, async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
})
t.teardown(async () => await new Promise((resolve) => receiver.close(resolve)))

t.test('log in: a wrong token is refused, the right one opens a HttpOnly SameSite=Strict session', async (t) => {
  const { page, errors } = await newPage(t, 'login-overview')
  await page.goto(`${base}/admin/console/`)
  await checkAccessible(t, page, 'login')
  await page.getByLabel('Admin token').fill('wrong-token-0123456789')
  await page.getByRole('button', { name: 'Log in' }).click()
  t.equal(await page.getByRole('alert').textContent(), 'Wrong token.')
  t.same(await context.cookies(), [], 'no session for a wrong token')
  // By keyboard alone: the field, the token, Enter.
  await page.getByLabel('Admin token').fill('')
  await page.getByLabel('Admin token').focus()
  await page.keyboard.type(TOKEN)
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
  await page.keyboard.press('Tab')
  t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content', 'the first stop skips to the content')
  await page.keyboard.press('Tab')
  t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Overview', 'then the sections')
  const [cookie] = await context.cookies()
  t.match(cookie, { name: 'anvil_admin_session', httpOnly: true, sameSite: 'Strict', path: '/admin' })
  t.notMatch(cookie?.value ?? '', TOKEN, 'the token is not in the cookie')
  t.equal(await page.evaluate(() => document.cookie), '', 'the page\'s script cannot read the session')
  await checkAccessible(t, page, 'overview')
  t.same(pageErrors(errors), [], 'no error in the page (a CSP refusal would be one)')
})

t.test('a state change without the CSRF token is refused, even from the console\'s own origin with its cookie', async (t) => {
  const { page } = await loggedIn(t, 'csrf-refused')
  const answer = await page.evaluate(async () => {
    const res = await fetch('/admin/session', { method: 'DELETE', credentials: 'same-origin' })
    return { status: res.status, body: await res.json() }
  })
  t.same(answer, { status: 403, body: { error: 'Missing or wrong CSRF token (x-csrf-token)', code: 'ANVIL_ERR_CSRF' } })
  await page.reload()
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
  t.pass('still logged in')
})

t.test('events arrive; filter by provider and status; the XSS payloads render as text', async (t) => {
  await sendStripe('evt_console_ok', 'invoice.paid', { amount: 4200 })
  await sendStripe('evt_console_xss', 'customer.updated', { name: XSS[0], note: XSS[1] })
  await sendGithub('opened')
  // At the top level, for the handler to see while the switch is on: fail: true fails (a retry waits), dead: true dead-letters.
  for (const [id, type, flag] of [['evt_console_fails', 'charge.failed', 'fail'], ['evt_console_dead', 'charge.dispute.created', 'dead']]) {
    const signed = signRequest('stripe', { body: { id, object: 'event', type, [flag as string]: true }, secret: STRIPE_SECRET })
    t.equal((await fetch(`${base}/webhooks/stripe`, { method: 'POST', headers: signed.headers, body: signed.body })).status, 202)
  }
  await eventually('(adminGet<{ items: unknown[] }>(\'/events?status=done,failed,dead\')).i…', async () => (await adminGet<{ items: unknown[] }>('/events?status=done,failed,dead')).items.length >= 5)

  const { page, errors } = await loggedIn(t, 'events-xss-as-text')
  let dialogs = 0
  page.on('dialog', (dialog) => { dialogs++; void dialog.dismiss() })
  await page.getByRole('link', { name: 'Events' }).click()
  await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor()
  await page.locator('table.events tbody tr').nth(4).waitFor()
  t.equal(await page.locator('table.events tbody tr').count(), 5, 'every event arrived')
  await checkAccessible(t, page, 'events')

  await page.getByLabel('Provider').fill('stripe')
  await page.getByLabel('Status').selectOption('failed')
  await page.getByRole('button', { name: 'Apply filter' }).click()
  await page.waitForURL(/#\/events\?provider=stripe&status=failed/)
  // The unfiltered rows stay until the filtered answer replaces them.
  await eventually('(page.locator(\'table.events tbody tr\').count()) === 1', async () => (await page.locator('table.events tbody tr').count()) === 1)
  const rows = await page.locator('table.events tbody tr').allInnerTexts()
  t.equal(rows.length, 1, 'one failed Stripe event')
  t.match(rows[0], /failed\s+stripe\s+stripe\s+charge\.failed/)
  await page.reload()
  await page.locator('table.events tbody tr').first().waitFor()
  t.equal(await page.getByLabel('Provider').inputValue(), 'stripe', 'the filter lives in the URL')

  await page.goto(`${base}/admin/console/#/events/${encodeURIComponent((await adminGet<{ items: Array<{ id: string }> }>('/events?type=customer.updated')).items[0]?.id ?? '')}`)
  const payload = page.getByTestId('payload')
  await payload.waitFor()
  const shown = await payload.textContent()
  for (const markup of XSS) t.ok(shown?.includes(JSON.stringify(markup).slice(1, -1)), `${markup} shows as characters`)
  t.equal(await page.locator('main img, main script').count(), 0, 'no element made from the payload')
  t.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'nothing of it ran')
  t.equal(dialogs, 0)
  await checkAccessible(t, page, 'one event')
  t.same(pageErrors(errors), [])
})

t.test('open a failed event, replay it, and watch it turn done', async (t) => {
  const { items } = await adminGet<{ items: Array<{ id: string }> }>('/events?status=failed&type=charge.failed')
  t.equal(items.length, 1)
  rmSync(failSwitch)
  const { page } = await loggedIn(t, 'event-replayed-done')
  await page.goto(`${base}/admin/console/#/events/${encodeURIComponent(items[0]?.id ?? '')}`)
  await page.getByTestId('event-status').getByText('failed').waitFor()
  await page.getByRole('button', { name: 'Replay', exact: true }).click()
  await page.getByText(/^Replayed/).waitFor()
  await page.getByTestId('event-status').getByText('done').waitFor()
  t.pass('failed, replayed, done')
})

t.test('bulk replay a filtered set of 200 and see the progress reach the end', async (t) => {
  const sends = Array.from({ length: 200 }, (_, i) => async () => await sendStripe(`evt_bulk_${i}`, 'payout.paid', { n: i }))
  for (let i = 0; i < sends.length; i += 25) await Promise.all(sends.slice(i, i + 25).map(async (send) => await send()))
  await eventually('(adminGet<{ items: unknown[] }>(\'/events?type=payout.paid&status=done…', async () => (await adminGet<{ items: unknown[] }>('/events?type=payout.paid&status=done&limit=500')).items.length === 200)
  const { page } = await loggedIn(t, 'bulk-replay')
  await page.goto(`${base}/admin/console/#/events?type=payout.paid`)
  await page.getByRole('button', { name: 'Replay all matching…' }).click()
  t.equal(await page.locator('#confirm-text').textContent(), 'Replay 200 events matched by this filter?', 'the count from a dry run')
  await checkAccessible(t, page, 'bulk replay confirmation')
  await page.getByRole('button', { name: 'Replay 200 events' }).click()
  await page.getByText('Replayed 200 of 200: done').waitFor({ timeout: 60_000 })
  t.equal(await page.locator('#replay-progress').getAttribute('value'), '200')
})

t.test('dead letters: shown with their failure, replayed one at a time', async (t) => {
  const { page, errors } = await loggedIn(t, 'dead-letters')
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Dead letters' }).click()
  const row = page.locator('tr', { hasText: 'charge.dispute.created' })
  await row.waitFor()
  t.match(await row.textContent(), /handler gave up on it: the fail switch is on/, 'with its failure')
  await row.getByRole('button', { name: /^Replay / }).click()
  await row.getByText('replayed').waitFor()
  await eventually('(adminGet<{ status: string }>(`/events/${encodeURIComponent(\'evt_cons…', async () => (await adminGet<{ status: string }>(`/events/${encodeURIComponent('evt_console_dead')}`)).status === 'done')
  t.pass('the replay ran and the event is done')
  t.same(pageErrors(errors), [])
})

t.test('a paced bulk replay can be cancelled: it stops short, and says so', async (t) => {
  const { page } = await loggedIn(t, 'bulk-replay-cancelled')
  await page.goto(`${base}/admin/console/#/events?type=payout.paid`)
  await page.getByRole('button', { name: 'Replay all matching…' }).click()
  await page.getByLabel('At most this many per second (empty: as fast as it goes)').fill('5')
  await page.getByRole('button', { name: 'Replay 200 events' }).click()
  await page.getByRole('button', { name: 'Cancel replay' }).click()
  await page.getByText(/^Replayed \d+ of 200: cancelled$/).waitFor()
  const value = Number(await page.locator('#replay-progress').getAttribute('value'))
  t.ok(value < 200, `stopped at ${value} of 200`)
})

t.test('outgoing: create an endpoint (its types from the catalog, its secret shown once), change its subscriptions, disable and enable it, rotate its secret, send a test event and see its delivery', async (t) => {
  const admin = portalAdmin(base, TOKEN)
  for (const name of ['invoice.paid', 'invoice.voided']) await admin.send('PUT', `/event-types/${name}`, { description: `An invoice, ${name.split('.')[1] ?? ''}.`, schema: { type: 'object' } })
  const { page, errors } = await loggedIn(t, 'endpoints')
  await page.getByRole('link', { name: 'Endpoints' }).click()
  await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor()
  await page.getByRole('button', { name: 'Add endpoint' }).click()
  const form = page.getByRole('form', { name: 'New endpoint' })
  await form.getByLabel('URL').fill(receiverUrl)
  await form.getByRole('checkbox', { name: /invoice\.paid/ }).check()
  await form.getByRole('checkbox', { name: /invoice\.voided/ }).check()
  await form.getByLabel('Description').fill(XSS[1] as string)
  await form.getByRole('button', { name: 'Create endpoint' }).click()
  const first = await page.getByTestId('secret').textContent()
  t.match(first, /^whsec_[A-Za-z0-9+/=]+$/, 'the new secret, shown once')
  await page.getByRole('button', { name: 'I have copied it' }).click()
  t.equal(await page.getByTestId('secret').count(), 0, 'and gone once dismissed')
  const endpoint = page.getByTestId('endpoint').first()
  t.ok((await endpoint.textContent())?.includes(XSS[1] as string), 'the description shows as characters')
  t.same((await adminGet<{ items: Array<{ eventTypes: string[] }> }>('/endpoints')).items[0]?.eventTypes, ['invoice.paid', 'invoice.voided'], 'the types picked from the catalog')
  await checkAccessible(t, page, 'endpoints')

  await endpoint.getByRole('link', { name: receiverUrl }).click()
  await page.getByRole('heading', { level: 1, name: receiverUrl }).waitFor()
  await settled(page)
  const subscriptions = page.getByRole('form', { name: 'Subscriptions' })
  await subscriptions.getByRole('checkbox', { name: /invoice\.voided/ }).uncheck()
  await subscriptions.getByRole('button', { name: 'Save subscriptions' }).click()
  await subscriptions.getByText('Subscriptions saved').waitFor()
  await page.getByRole('button', { name: 'Disable', exact: true }).click()
  await page.getByText('Disabled: nothing is sent to it').waitFor()
  await page.getByTestId('state').filter({ hasText: 'disabled' }).waitFor()
  await page.getByRole('button', { name: 'Enable', exact: true }).click()
  await page.getByRole('button', { name: 'Disable', exact: true }).waitFor()
  const secret = page.getByRole('region', { name: 'Signing secret' })
  await secret.getByRole('button', { name: 'Rotate secret…' }).click()
  await secret.getByRole('alertdialog').getByRole('button', { name: 'Rotate now' }).click()
  await secret.getByText(/^Secret rotated/).waitFor()
  const rotated = await secret.getByTestId('secret').textContent()
  t.match(rotated, /^whsec_/)
  t.not(rotated, first, 'a new secret')
  await page.getByRole('button', { name: 'Send test event' }).click()
  await page.getByText(/^Test event sent/).waitFor()
  const [listed] = (await adminGet<{ items: Array<{ eventTypes: string[], enabled: boolean }> }>('/endpoints')).items
  t.match(listed, { eventTypes: ['invoice.paid'], enabled: true }, 'the API agrees')

  // No reload: the endpoint's attempts are read again until the test event's shows.
  const delivery = page.getByTestId('delivery').filter({ hasText: 'success' }).first()
  await delivery.waitFor()
  t.match(await delivery.innerText(), /success\s+200\s+Attempt 1\s+\d+ ms/, 'the test event, delivered: success, HTTP 200, attempt 1')
  t.equal(received.length, 1, 'the receiver got it')
  t.match(received[0]?.headers, { 'webhook-id': String, 'webhook-signature': /^v1,/ }, 'signed as Standard Webhooks')
  await checkAccessible(t, page, 'an endpoint')
  // A success sent again is a duplicate: asked first.
  await delivery.getByRole('button', { name: /^Send again/ }).click()
  await page.getByRole('group', { name: /^Confirm sending delivery / }).getByRole('button', { name: 'Send', exact: true }).click()
  await page.getByText('Retry queued').waitFor()
  await eventually('received.length === 2', async () => received.length === 2)
  t.equal(received[1]?.headers['webhook-id'], received[0]?.headers['webhook-id'], 'the same message again, by its id')
  t.same(pageErrors(errors), [])
})

t.test('every page: reachable from the navigation, no serious axe-core violation, no error; the overview charts the last hour', async (t) => {
  const { page, errors } = await loggedIn(t, 'overview')
  for (const [link, heading] of [['Events', 'Events'], ['Dead letters', 'Dead letters'], ['Endpoints', 'Endpoints'], ['Deliveries', 'Deliveries'], ['Undelivered', 'Undelivered'], ['Overview', 'Overview']] as const) {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: link }).click()
    await page.getByRole('heading', { level: 1, name: heading }).waitFor()
    await settled(page)
    await checkAccessible(t, page, heading)
  }
  t.match(await page.getByTestId('outbox').textContent(), /^\d+ pending \(oldest .+\), \d+ failed$/, 'the outbox backlog')
  await page.locator('figure.chart rect').first().waitFor()
  t.ok(await page.locator('figure.chart rect').count() > 0, 'bars for the minutes with events')
  t.match(await page.locator('figure.chart figcaption').textContent(), /\d+ (\(the newest\) )?events over 60 minutes/)
  t.same(pageErrors(errors), [])
})
