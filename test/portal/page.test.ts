/**
 * The tenants' portal page (docs/portal.md) in a real Chromium at 1280 px, against a real `anvil serve` and
 * `anvil worker` (test/helpers/console.ts) and real receivers. Two tenants: the page opened with tenant acme's
 * link shows and acts on acme's endpoints and deliveries only, with the token out of the URL and sent as Bearer
 * with no cookie; subscriptions picked from the catalog, the secret once with its copy button, rotation after a
 * confirmation, the delivery log with its answers and retry, a test event made from the type's schema, the
 * verify snippets exactly as docs/outgoing-webhooks.md gives them, and a revoked or forged link; axe finds nothing.
 */
import t, { type Test } from 'tap'
import AjvModule from 'ajv'
import type { BrowserContext, Page } from 'playwright-core'
import { consoleErrors, midWordBreaks, openBrowser, screenshot, seriousViolations } from '../helpers/browser.js'
import { pageErrors, settled, startConsoleServer, TOKEN, type ConsoleServer } from '../helpers/console.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { docsBlock, INVOICE_PAID, portalAdmin } from '../helpers/portal.js'

t.setTimeout(300_000)
let { base, waitFor } = {} as ConsoleServer
let context: BrowserContext
beforeStep(t, async () => {
  ({ base, waitFor } = await startConsoleServer(t))
  context = await openBrowser(t)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
})
const admin = beforeAll(t, async () => portalAdmin(base, TOKEN))

const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  const down = req.url.startsWith('/down')
  res.statusCode = down ? 500 : 200
  res.end(down ? 'down for maintenance' : 'thanks, got it')
}), async (receiver) => await receiver.close())

interface Endpoint { id: string, url: string, tenant: string | null, eventTypes: string[] }
interface Delivery { id: string, endpointId: string, status: string, httpStatus: number | null }
const deliveries = async (endpoint: string): Promise<Delivery[]> => (await admin.get<{ items: Delivery[] }>(`/deliveries?endpoint=${endpoint}&limit=100`)).items

// The catalog, and two tenants with an endpoint that takes deliveries and one that fails them.
const make = async (path: string, tenant: string, eventTypes: string[] = []): Promise<Endpoint> =>
  await admin.send<Endpoint>('POST', '/endpoints', { url: `${receiver.url}${path}`, tenant, eventTypes })
// Each has an answered attempt (not only `started`) before any page shows the log.
const answered = async (e: Endpoint): Promise<boolean> => (await deliveries(e.id)).some((d) => d.status !== 'started')
let acme: Endpoint, acmeDown: Endpoint, globex: Endpoint
let acmeLink: { token: string, url: string }
beforeStep(t, async () => {
  await admin.send('PUT', '/event-types/invoice.paid', { description: 'An invoice was paid in full.', schema: INVOICE_PAID })
  await admin.send('PUT', '/event-types/customer.created', { description: 'A customer signed up.', schema: { type: 'object', properties: { email: { type: 'string', format: 'email' } } } })
  acme = await make('/acme/orders', 'acme', ['invoice.paid'])
  acmeDown = await make('/down/acme', 'acme')
  globex = await make('/globex/hooks', 'globex')
  for (const endpoint of [acme, acmeDown, globex]) await admin.send('POST', `/endpoints/${endpoint.id}/test`, {})
  await waitFor(async () => (await Promise.all([acme, acmeDown, globex].map(answered))).every(Boolean))
  acmeLink = await admin.send<{ token: string, url: string }>('POST', '/portal/tokens', { tenant: 'acme' })
})

/** The portal opened from `url` in a new tab; its last state is saved as .tap/console/<name>.png (docs/images/ takes others). */
async function openPortal (t: Test, name: string, url = acmeLink.url): Promise<{ page: Page, errors: string[] }> {
  const page = await context.newPage()
  const errors = consoleErrors(page)
  t.teardown(async () => { await screenshot(page, name); await page.close() })
  await page.goto(url)
  await page.getByRole('navigation', { name: 'Sections' }).or(page.getByTestId('no-access')).first().waitFor()
  await settled(page)
  return { page, errors }
}

async function accessible (t: Test, page: Page, what: string): Promise<void> {
  t.same(await seriousViolations(page), [], `${what}: no serious axe-core violation`)
  t.same(await midWordBreaks(page), [], `${what}: no word broken at 1280 px`)
}

t.test('the link opens acme\'s page: the token leaves the URL and goes as Bearer, no cookie; only acme\'s endpoints and deliveries show', async (t) => {
  t.match(acmeLink.url, /\/admin\/portal\/#token=anvil_pt_/, 'the link holds the token in its fragment')
  const { page, errors } = await openPortal(t, 'portal-endpoints-last')
  const calls: Array<{ url: string, authorization?: string, cookie?: string }> = []
  page.on('request', (request) => {
    if (!request.url().includes('/admin/portal/')) void request.allHeaders().then((h) => calls.push({ url: request.url(), authorization: h.authorization, cookie: h.cookie }))
  })
  t.notMatch(page.url(), /token/, 'the token is out of the address bar')
  t.equal(await page.evaluate(() => sessionStorage.getItem('anvil-portal-token')), acmeLink.token, 'kept in this tab')
  t.match(await page.getByTestId('tenant').innerText(), /^acme · link valid until /, 'the header names the tenant')
  await page.getByRole('heading', { level: 2, name: '2 endpoints', exact: true }).waitFor()
  const shown = await page.getByTestId('endpoint').locator('h3').allInnerTexts()
  t.same(shown.sort(), [acme.url, acmeDown.url].sort(), 'acme\'s two endpoints, not globex\'s')
  t.notMatch(await page.locator('main').innerText(), /globex/, 'nothing of globex')
  await accessible(t, page, 'endpoints')
  await screenshot(page, 'portal-endpoints')

  await page.reload()
  await page.getByTestId('endpoint').first().waitFor()
  await page.getByRole('link', { name: 'Deliveries' }).first().click()
  await page.getByRole('heading', { level: 1, name: 'Deliveries' }).waitFor()
  await page.getByTestId('delivery').first().waitFor()
  await settled(page)
  const rows = await page.getByTestId('delivery').allInnerTexts()
  t.ok(rows.length >= 2, `acme's deliveries: ${rows.length}`)
  t.notOk(rows.some((row) => row.includes(globex.id)), 'none of globex\'s')
  t.ok(rows.some((row) => /\b200\b[\s\S]*thanks, got it/.test(row)), 'a status code with the answer\'s excerpt')
  t.ok(rows.some((row) => /\b500\b[\s\S]*down for maintenance/.test(row)), 'a failure with its answer')
  await accessible(t, page, 'deliveries')
  await screenshot(page, 'portal-deliveries')
  t.ok(calls.length > 0, 'the page called the API')
  t.same(calls.filter((c) => c.authorization !== `Bearer ${acmeLink.token}` || c.cookie !== undefined), [], 'each call with the token as Bearer, none with a cookie')
  t.same(pageErrors(errors), [])
})

t.test('a new endpoint subscribes to types picked from the catalog; its secret shows once with a copy button', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-create-last')
  const form = page.getByRole('form', { name: 'New endpoint' })
  await form.getByLabel('URL').fill(`${receiver.url}/acme/new`)
  await form.getByRole('checkbox', { name: /invoice\.paid/ }).check()
  await form.getByLabel('Description').fill('made in the portal')
  await form.getByRole('button', { name: 'Create endpoint' }).click()
  const row = page.getByTestId('endpoint').filter({ hasText: `${receiver.url}/acme/new` })
  const secret = row.getByTestId('secret')
  await secret.waitFor()
  t.match(await secret.textContent(), /^whsec_[A-Za-z0-9+/=]+$/, 'the secret, beside its endpoint')
  await row.getByRole('button', { name: 'Copy the secret' }).click()
  await row.getByText('Copied', { exact: true }).waitFor()
  t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), await secret.textContent(), 'copied')
  const made = (await admin.get<{ items: Endpoint[] }>('/endpoints?tenant=acme')).items.find((e) => e.url === `${receiver.url}/acme/new`)
  t.match(made, { tenant: 'acme', eventTypes: ['invoice.paid'] }, 'made in the token\'s tenant, with the picked type')
  await row.getByRole('button', { name: 'I have copied it' }).click()
  t.equal(await row.getByTestId('secret').count(), 0, 'shown once')
  await row.getByRole('button', { name: 'Disable', exact: true }).click()
  await row.getByText('Disabled', { exact: true }).waitFor()
  t.equal((await admin.get<{ enabled: boolean }>(`/endpoints/${made?.id ?? ''}`)).enabled, false, 'disabled')
  await row.getByRole('button', { name: 'Enable', exact: true }).click()
  await row.getByText('Enabled', { exact: true }).waitFor()
  await row.getByLabel('Re-send what failed since (ISO time)').fill('2020-01-01T00:00:00Z')
  await row.getByRole('button', { name: 'Recover' }).click()
  await row.getByText('Recovery queued: 0 messages').waitFor()

  const picker = row.getByRole('group', { name: 'Event types' })
  await picker.getByRole('checkbox', { name: /customer\.created/ }).check()
  await picker.getByRole('checkbox', { name: /endpoint\.disabled/ }).check()
  await row.getByRole('button', { name: 'Save types' }).click()
  await row.getByText('Event types saved').waitFor()
  t.same((await admin.get<Endpoint>(`/endpoints/${made?.id ?? ''}`)).eventTypes, ['invoice.paid', 'customer.created', 'endpoint.disabled'],
    'subscriptions changed, an operational event about its own endpoints among them')

  await page.getByRole('link', { name: 'Event types' }).click()
  await page.getByRole('heading', { level: 2, name: '2 event types' }).waitFor()
  const card = page.getByTestId('event-type').filter({ hasText: 'invoice.paid' })
  await card.getByText('Schema of invoice.paid').click()
  t.match(await card.getByTestId('schema').textContent(), /"invoiceId"/, 'the catalog with its schemas')
  await accessible(t, page, 'event types')
  t.same(pageErrors(errors), [])
})

t.test('rotation asks first, with a choice of grace period, and shows the new secret once', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-rotate-last')
  const rotations: string[] = []
  page.on('request', (request) => { if (request.url().endsWith('/rotate-secret')) rotations.push(request.postData() ?? '') })
  const row = page.getByTestId('endpoint').filter({ hasText: acme.url })
  await row.getByRole('button', { name: 'Rotate secret…' }).click()
  const confirm = row.getByRole('alertdialog')
  await confirm.getByRole('button', { name: 'Cancel' }).click()
  t.same(rotations, [], 'nothing rotated without a confirmation')
  await row.getByRole('button', { name: 'Rotate secret…' }).click()
  await confirm.getByLabel('Grace period').selectOption({ label: '1 hour' })
  await accessible(t, page, 'a rotation to confirm')
  await confirm.getByRole('button', { name: 'Rotate now' }).click()
  await row.getByTestId('secret').waitFor()
  t.same(rotations.map((body) => JSON.parse(body)), [{ graceSeconds: 3600 }], 'one rotation, with the chosen grace')
  t.same(pageErrors(errors), [])
})

t.test('a test event carries a sample made from the type\'s schema; a failed delivery is retried from the log', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-test-event-last')
  const row = page.getByTestId('endpoint').filter({ hasText: acme.url })
  await row.getByRole('button', { name: 'Send test event…' }).click()
  const form = row.getByRole('form', { name: `Test event to ${acme.url}` })
  t.equal(await form.getByLabel('Event type').inputValue(), 'invoice.paid', 'the type the endpoint subscribes to')
  const sample = JSON.parse(await form.getByRole('textbox').inputValue()) as unknown
  const check = new AjvModule.default({ strict: false }).compile(INVOICE_PAID)
  t.ok(check(sample), `the sample fits the schema: ${JSON.stringify(check.errors)}`)
  await accessible(t, page, 'a test event')
  await screenshot(page, 'portal-test-event')
  const got = receiver.received.length
  await form.getByRole('button', { name: 'Send test event' }).click()
  const note = await row.getByText(/^Test event sent: message /).innerText()
  const messageId = note.replace('Test event sent: message ', '')
  await waitFor(async () => receiver.received.slice(got).some((r) => r.headers['webhook-id'] === messageId))
  const delivered = receiver.received.slice(got).find((r) => r.headers['webhook-id'] === messageId)
  t.match(JSON.parse(delivered?.body ?? '{}'), { type: 'invoice.paid', data: sample }, 'the receiver got the sample, typed')
  await page.goto(`${base}/admin/portal/#/deliveries?endpoint=${acme.id}`)
  await page.getByTestId('delivery').getByRole('link', { name: messageId }).click()
  await page.getByRole('heading', { level: 1, name: `Message ${messageId}` }).waitFor()
  t.match(await page.getByTestId('payload').textContent(), /"invoiceId"/, 'its message opens from the log, with its data')

  const before = (await deliveries(acmeDown.id)).length
  await page.goto(`${base}/admin/portal/#/deliveries?endpoint=${acmeDown.id}`)
  const failed = page.getByTestId('delivery').filter({ hasText: 'down for maintenance' }).first()
  await failed.getByRole('button', { name: /^Retry: delivery / }).click()
  await page.getByText('retry queued').waitFor()
  await waitFor(async () => (await deliveries(acmeDown.id)).length > before)
  t.pass('the retry made another delivery')
  t.same(pageErrors(errors), [])
})

t.test('verify in your code: the recipes of docs/outgoing-webhooks.md as written, for Node, Python and Go', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-verify-last')
  await page.getByRole('link', { name: 'Verify in your code' }).click()
  const snippet = page.getByTestId('snippet')
  await snippet.waitFor()
  t.equal(await snippet.textContent(), docsBlock('verify-webhook.mjs: Node without a package'), 'Node')
  await screenshot(page, 'portal-verify')
  await accessible(t, page, 'verify')
  await page.getByRole('button', { name: 'Python', exact: true }).click()
  t.equal(await snippet.textContent(), docsBlock('verify_webhook.py: Python, standard library only'), 'Python')
  await page.getByRole('button', { name: 'Go', exact: true }).click()
  t.equal(await snippet.textContent(), docsBlock('verify.go: Go 1.18 or later, standard library only'), 'Go')
  await page.getByRole('button', { name: 'Copy the Go code' }).click()
  await page.getByText('Copied', { exact: true }).waitFor()
  t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), await snippet.textContent(), 'copied')
  t.same(pageErrors(errors), [])
})

t.test('a read-only link shows the same records and offers no change', async (t) => {
  const reader = await admin.send<{ url: string }>('POST', '/portal/tokens', { tenant: 'acme', scopes: ['read'] })
  const { page, errors } = await openPortal(t, 'portal-read-only-last', reader.url)
  await page.getByTestId('tenant').getByText('acme (read only)', { exact: false }).waitFor()
  await page.getByTestId('endpoint').first().waitFor()
  t.ok((await page.getByTestId('endpoint').locator('h3').allInnerTexts()).includes(acme.url), 'acme\'s endpoints')
  t.match(await page.getByTestId('endpoint').filter({ hasText: acme.url }).getByTestId('types').innerText(), /invoice\.paid/, 'their subscriptions, as text')
  for (const name of ['Create endpoint', 'Rotate secret…', 'Send test event…', 'Disable', 'Save types', 'Recover']) {
    t.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name}`)
  }
  await page.getByRole('link', { name: 'Deliveries', exact: true }).first().click()
  await page.getByTestId('delivery').first().waitFor()
  t.equal(await page.getByRole('button', { name: /^(Retry|Send again): / }).count(), 0, 'no retry')
  await accessible(t, page, 'read only')
  t.same(pageErrors(errors), [])
})

t.test('a revoked, forged or missing link says so, and is not a broken page', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-expired-last')
  await admin.send('POST', '/portal/tenants/acme/revoke')
  await page.reload()
  await page.getByRole('heading', { level: 1, name: 'This link has expired' }).waitFor()
  t.equal(await page.evaluate(() => sessionStorage.getItem('anvil-portal-token')), null, 'the dead token is dropped')
  await accessible(t, page, 'an expired link')
  await screenshot(page, 'portal-expired')
  const forged = await openPortal(t, 'portal-forged', `${base}/admin/portal/#token=anvil_pt_forged`)
  await forged.page.getByRole('heading', { level: 1, name: 'This link has expired' }).waitFor()
  const none = await openPortal(t, 'portal-no-link', `${base}/admin/portal/`)
  await none.page.getByRole('heading', { level: 1, name: 'No access link' }).waitFor()
  t.same([...pageErrors(errors), ...pageErrors(forged.errors), ...pageErrors(none.errors)], [], 'no error but the 401s the page explains')
})
