/**
 * The tenants' portal page (docs/portal.md) in a real Chromium, against a real `anvil serve` and `anvil worker`
 * (test/helpers/console.ts) and real receivers, one browser for the file. Two tenants: the page opened with tenant
 * acme's link shows and acts on acme's records only, its token out of the URL and sent as Bearer with no cookie.
 * The endpoint list (a card each: state, a day's success rate, last delivery), the endpoint page (overview,
 * subscriptions from the catalog, the secret revealed, copied and rotated after a confirmation, a test event made
 * from the type's schema whose attempt shows by itself, a retry that asks before a duplicate, recover from a date
 * control), the message page (each attempt's headers and answer), the catalog with examples, the verify snippets,
 * a read-only link, a dead link; and the list to a secret by keyboard alone. Every page at each width and mode, with
 * axe-core and Tab on every action, is test/portal/visual.test.ts.
 */
import t, { type Test } from 'tap'
import AjvModule from 'ajv'
import type { BrowserContext, Page } from 'playwright-core'
import { consoleErrors, openBrowser, screenshot, seriousViolations } from '../helpers/browser.js'
import { pageErrors, settled, startConsoleServer, TOKEN, type ConsoleServer } from '../helpers/console.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { docsBlock, INVOICE_PAID, portalAdmin } from '../helpers/portal.js'
import { eventually } from '../helpers/eventually.js'

t.setTimeout(420_000)
let { base } = {} as ConsoleServer
let context: BrowserContext
beforeStep(t, async () => {
  ({ base } = await startConsoleServer(t))
  context = await openBrowser(t)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
})
const admin = beforeAll(t, async () => portalAdmin(base, TOKEN))

const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  const down = req.url.startsWith('/down')
  res.statusCode = down ? 500 : 200
  res.setHeader('x-receiver', 'acme-edge-7')
  res.end(down ? 'down for maintenance' : 'thanks, got it')
}), async (receiver) => await receiver.close())

interface Endpoint { id: string, url: string, tenant: string | null, eventTypes: string[], enabled: boolean }
interface Delivery { id: string, endpointId: string, messageId: string, status: string, httpStatus: number | null, trigger: string }
const deliveries = async (endpoint: string): Promise<Delivery[]> => (await admin.get<{ items: Delivery[] }>(`/deliveries?endpoint=${endpoint}&limit=100`)).items

const make = async (path: string, tenant: string, eventTypes: string[] = [], description = ''): Promise<Endpoint> =>
  await admin.send<Endpoint>('POST', '/endpoints', { url: `${receiver.url}${path}`, tenant, eventTypes, description })
const answered = async (e: Endpoint): Promise<boolean> => (await deliveries(e.id)).some((d) => d.status !== 'started')
let acme: Endpoint, acmeDown: Endpoint, globex: Endpoint
/** A link opens the portal once: each page gets a new one. */
const acmeLink = async (): Promise<{ token: string, url: string }> => await admin.send<{ token: string, url: string }>('POST', '/portal/tokens', { tenant: 'acme' })
beforeStep(t, async () => {
  await admin.send('PUT', '/event-types/invoice.paid', { description: 'An invoice was paid in full.', schema: INVOICE_PAID })
  await admin.send('PUT', '/event-types/customer.created', { description: 'A customer signed up.', schema: { type: 'object', properties: { email: { type: 'string', format: 'email' } } } })
  acme = await make('/acme/orders', 'acme', ['invoice.paid'], 'Order sync for the warehouse')
  acmeDown = await make('/down/acme', 'acme', [], 'Legacy CRM bridge')
  globex = await make('/globex/hooks', 'globex')
  for (const endpoint of [acme, acmeDown, globex]) await admin.send('POST', `/endpoints/${endpoint.id}/test`, {})
  await eventually('(Promise.all([acme, acmeDown, globex].map(answered))).every(Boolean)', async () => (await Promise.all([acme, acmeDown, globex].map(answered))).every(Boolean))
})

/** The portal opened from `url` in a new tab; its last state is saved as .tap/console/<name>.png. */
async function openPortal (t: Test, name: string, url?: string): Promise<{ page: Page, errors: string[] }> {
  const page = await context.newPage()
  const errors = consoleErrors(page)
  t.teardown(async () => { await screenshot(page, name); await page.close() })
  await page.goto(url ?? (await acmeLink()).url)
  await page.getByRole('navigation', { name: 'Sections' }).or(page.getByTestId('no-access')).first().waitFor()
  await settled(page)
  return { page, errors }
}

const card = (page: Page, endpoint: Endpoint) => page.getByTestId('endpoint').filter({ hasText: endpoint.url })
async function openEndpoint (page: Page, endpoint: Endpoint): Promise<void> {
  await card(page, endpoint).getByRole('link', { name: endpoint.url }).click()
  await page.getByRole('heading', { level: 1, name: endpoint.url }).waitFor()
  await settled(page)
}

t.test('the link opens acme\'s list: a card per endpoint with its state, success rate and last delivery; token as Bearer, no cookie', async (t) => {
  const link = await acmeLink()
  t.match(link.url, /\/admin\/portal\/#code=anvil_pl_/, 'the link holds a one-time code in its fragment, not the token')
  const { page, errors } = await openPortal(t, 'portal-endpoints-last', link.url)
  const calls: Array<{ url: string, authorization?: string, cookie?: string }> = []
  page.on('request', (request) => {
    if (!request.url().includes('/admin/portal/')) void request.allHeaders().then((h) => calls.push({ url: request.url(), authorization: h.authorization, cookie: h.cookie }))
  })
  t.notMatch(page.url(), /code=|anvil_p/, 'the code is out of the address bar')
  const session = await page.evaluate(() => sessionStorage.getItem('anvil-portal-token')) ?? ''
  t.match(session, /^anvil_pt_/, 'the session\'s token, kept in this tab')
  t.not(session, link.token, 'its own, not the API\'s')
  t.match(await page.getByTestId('tenant').innerText(), /^acme · link valid until /, 'the header names the tenant')
  await page.getByTestId('success-rate').first().filter({ hasText: '%' }).waitFor()
  t.same((await page.getByTestId('endpoint').locator('.endpoint-url').allInnerTexts()).sort(), [acme.url, acmeDown.url].sort(), 'acme\'s two endpoints, not globex\'s')
  t.notMatch(await page.locator('main').innerText(), /globex/, 'nothing of globex')
  t.equal(await card(page, acme).getByTestId('success-rate').innerText(), '100 %', 'a day\'s success rate')
  t.equal(await card(page, acmeDown).getByTestId('success-rate').innerText(), '0 %')
  t.match(await card(page, acme).getByTestId('last-delivery').innerText(), /\d/, 'and when it last had one')
  t.equal(await card(page, acme).getByTestId('state').innerText(), 'enabled', 'a state badge')
  t.match(await card(page, acme).innerText(), /Order sync for the warehouse/, 'its description')
  t.equal(await page.getByRole('checkbox').count(), 0, 'no editor on the list')
  await screenshot(page, 'portal-endpoints')
  await page.reload()
  await page.getByTestId('endpoint').first().waitFor()
  t.ok(calls.length > 0, 'the page called the API')
  t.same(calls.filter((c) => c.authorization !== `Bearer ${session}` || c.cookie !== undefined), [], 'each call with the token as Bearer, none with a cookie')
  t.same(pageErrors(errors), [])
})

t.test('a new endpoint: types from the catalog, its secret shown once where it was made; the endpoint page changes it, each answer beside its button', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-create-last')
  await page.getByRole('button', { name: 'Add endpoint' }).click()
  const form = page.getByRole('form', { name: 'New endpoint' })
  await form.getByLabel('URL').fill(`${receiver.url}/acme/new`)
  await form.getByRole('checkbox', { name: /invoice\.paid/ }).check()
  await form.getByLabel('Description').fill('made in the portal')
  await form.getByRole('button', { name: 'Create endpoint' }).click()
  const secret = page.getByTestId('secret')
  await secret.waitFor()
  t.match(await secret.textContent(), /^whsec_[A-Za-z0-9+/=]+$/, 'the secret, shown once')
  await page.getByRole('button', { name: 'Copy the secret' }).click()
  await page.getByText('Copied', { exact: true }).waitFor()
  t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), await secret.textContent(), 'copied')
  const made = (await admin.get<{ items: Endpoint[] }>('/endpoints?tenant=acme')).items.find((e) => e.url === `${receiver.url}/acme/new`) as Endpoint
  t.match(made, { tenant: 'acme', eventTypes: ['invoice.paid'] }, 'made in the token\'s tenant, with the picked type')
  await page.getByRole('button', { name: 'I have copied it' }).click()
  t.equal(await page.getByTestId('secret').count(), 0, 'gone once dismissed')

  await openEndpoint(page, made)
  t.match(page.url(), new RegExp(`#/endpoints/${made.id}$`), 'the endpoint page has its own address')
  await page.getByRole('button', { name: 'Disable', exact: true }).click()
  await page.getByText('Disabled: nothing is sent to it').waitFor()
  await page.getByTestId('state').filter({ hasText: 'disabled' }).waitFor()
  t.equal((await admin.get<Endpoint>(`/endpoints/${made.id}`)).enabled, false, 'disabled')
  await page.getByRole('button', { name: 'Enable', exact: true }).click()
  await page.getByTestId('state').filter({ hasText: 'enabled' }).waitFor()

  const subscriptions = page.getByRole('form', { name: 'Subscriptions' })
  await subscriptions.getByRole('checkbox', { name: /customer\.created/ }).check()
  await subscriptions.getByRole('checkbox', { name: /endpoint\.disabled/ }).check()
  await subscriptions.getByRole('button', { name: 'Save subscriptions' }).click()
  await subscriptions.getByText('Subscriptions saved').waitFor()
  t.same((await admin.get<Endpoint>(`/endpoints/${made.id}`)).eventTypes, ['invoice.paid', 'customer.created', 'endpoint.disabled'],
    'subscriptions changed, the answer beside the button')

  const recover = page.getByRole('form', { name: 'Recover failed messages' })
  t.equal(await recover.getByLabel('Re-send what failed since').getAttribute('type'), 'datetime-local', 'a date control')
  await recover.getByLabel('Re-send what failed since').fill('2020-01-01T00:00')
  await recover.getByRole('button', { name: 'Recover' }).click()
  await page.getByText('Nothing failed since then: nothing to re-send').waitFor()
  t.same(pageErrors(errors), [])
})

t.test('the secret: revealed and copied; rotation asks first, with a grace period', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-rotate-last')
  await openEndpoint(page, acme)
  const section = page.getByRole('region', { name: 'Signing secret' })
  await section.getByRole('button', { name: 'Reveal' }).click()
  const shown = await section.getByTestId('secret').innerText()
  t.match(shown, /^whsec_/, 'revealed')
  const rotations: string[] = []
  page.on('request', (request) => { if (request.url().endsWith('/rotate-secret')) rotations.push(request.postData() ?? '') })
  await section.getByRole('button', { name: 'Rotate secret…' }).click()
  await section.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click()
  t.same(rotations, [], 'nothing rotated without a confirmation')
  await section.getByRole('button', { name: 'Rotate secret…' }).click()
  await section.getByRole('combobox', { name: 'Grace period' }).selectOption({ label: '1 hour' })
  await section.getByRole('button', { name: 'Rotate now' }).click()
  await section.getByText('Secret rotated: the old one signs beside it for the grace period.').waitFor()
  t.same(rotations.map((body) => JSON.parse(body)), [{ graceSeconds: 3600 }], 'one rotation, with the chosen grace')
  t.not(await section.getByTestId('secret').innerText(), shown, 'the new secret shows where it was rotated')
  t.same(pageErrors(errors), [])
})

t.test('custom headers: set in the portal, named but never shown, sent with each delivery, removed', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-headers-last')
  await openEndpoint(page, acmeDown)
  const section = page.getByRole('region', { name: 'Custom headers' })
  const form = section.getByRole('form', { name: 'Set a header' })
  await form.getByLabel('Header name').fill('X-Acme-Key')
  await form.getByLabel('Value').fill('acme-key-7a7a7a')
  await form.getByRole('button', { name: 'Set header' }).click()
  await section.getByText('Header x-acme-key saved').waitFor()
  await section.getByTestId('header-names').getByText('x-acme-key').waitFor()
  t.notOk((await page.content()).includes('acme-key-7a7a7a'), 'the value is not on the page once set')
  const before = receiver.received.length
  await admin.send('POST', `/endpoints/${acmeDown.id}/test`, {})
  await eventually('a delivery with the header', async () => receiver.received.slice(before).some((r) => r.headers['x-acme-key'] === 'acme-key-7a7a7a'))
  t.pass('the receiver got the header\'s value')
  await form.getByLabel('Header name').fill('Webhook-Id')
  await form.getByLabel('Value').fill('x')
  await form.getByRole('button', { name: 'Set header' }).click()
  await section.getByRole('alert').getByText(/webhook-id is reserved/).waitFor()
  await section.getByRole('button', { name: 'Remove' }).click()
  await section.getByText('No custom header.').waitFor()
  t.same((await admin.get<{ headerNames: string[] }>(`/endpoints/${acmeDown.id}`)).headerNames, [], 'removed')
  t.same(pageErrors(errors), [])
})

t.test('receiver authentication: OAuth set in the portal, shown without its secret, removed; mutual TLS shown by its fingerprint', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-receiver-auth-last')
  await openEndpoint(page, acme)
  const section = page.getByRole('region', { name: 'Receiver authentication' })
  await section.getByTestId('oauth-state').getByText('No OAuth.').waitFor()
  const form = section.getByRole('form', { name: 'Set OAuth' })
  await form.getByLabel('Token URL').fill('https://auth.acme.example/oauth/token')
  await form.getByLabel('Client id').fill('acme-webhooks')
  await form.getByLabel('Client secret').fill('acme-client-s3cret-5b5b')
  await form.getByLabel('Scope (optional)').fill('hooks:write')
  await form.getByRole('button', { name: 'Save OAuth' }).click()
  await section.getByText('OAuth saved').waitFor()
  await section.getByTestId('oauth-state').getByText('https://auth.acme.example/oauth/token').waitFor()
  t.notOk((await page.content()).includes('acme-client-s3cret-5b5b'), 'the secret is not on the page once set')
  t.match((await admin.get<{ oauth: unknown }>(`/endpoints/${acme.id}`)).oauth, { tokenUrl: 'https://auth.acme.example/oauth/token', clientId: 'acme-webhooks', scope: 'hooks:write' })
  await section.getByRole('form', { name: 'Set mutual TLS' }).getByLabel('Private key (PEM)').fill('not a key')
  await section.getByRole('form', { name: 'Set mutual TLS' }).getByLabel('Client certificate (PEM)').fill('not a certificate')
  await section.getByRole('button', { name: 'Save mutual TLS' }).click()
  await section.getByRole('alert').getByText(/tls\.cert: no PEM certificate/).waitFor()
  await section.getByRole('form', { name: 'Set OAuth' }).getByRole('button', { name: 'Remove' }).click()
  await section.getByText('OAuth removed').waitFor()
  t.equal((await admin.get<{ oauth: unknown }>(`/endpoints/${acme.id}`)).oauth, null, 'removed')
  t.same(pageErrors(errors), [])
})

t.test('an Ed25519 endpoint: made in the portal, its page shows the public key, rotated after a confirmation', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-ed25519-last')
  await page.getByRole('button', { name: 'Add endpoint' }).click()
  const form = page.getByRole('form', { name: 'New endpoint' })
  await form.getByLabel('URL').fill(`${receiver.url}/acme/ed25519`)
  await form.getByLabel('Signing').selectOption('ed25519')
  await form.getByRole('button', { name: 'Create endpoint' }).click()
  const shown = page.getByRole('status').filter({ hasText: 'The public key (Ed25519)' })
  const created = await shown.getByTestId('secret').innerText()
  t.match(created, /^whpk_/, 'the new endpoint shows its public key, not a secret')
  await shown.getByRole('link', { name: 'Open the new endpoint' }).click()
  const section = page.getByRole('region', { name: 'Public key' })
  t.equal(await section.getByTestId('public-key').innerText(), created, 'the endpoint page shows the public key')
  t.notOk((await page.content()).includes('whsk_'), 'never the signing key')
  await section.getByRole('button', { name: 'Rotate key…' }).click()
  await section.getByRole('button', { name: 'Rotate now' }).click()
  await section.getByText('Key rotated: the old one signs beside it for the grace period.').waitFor()
  await eventually('the page shows the new key', async () => (await section.getByTestId('public-key').innerText()) !== created)
  t.match(await section.getByTestId('public-key').innerText(), /^whpk_/)
  t.same(pageErrors(errors), [])
})

t.test('a test event from the schema shows its attempt by itself; the message page has every attempt in full; a retry of a delivered pair asks first', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-test-event-last')
  await openEndpoint(page, acme)
  const form = page.getByRole('form', { name: `Test event to ${acme.url}` })
  t.equal(await form.getByLabel('Event type').inputValue(), 'invoice.paid', 'the type the endpoint subscribes to')
  const sample = JSON.parse(await form.getByRole('textbox').inputValue()) as unknown
  const check = new AjvModule.default({ strict: false }).compile(INVOICE_PAID)
  t.ok(check(sample), `the sample fits the schema: ${JSON.stringify(check.errors)}`)
  const before = await page.getByTestId('delivery').count()
  await form.getByRole('button', { name: 'Send test event' }).click()
  const note = await page.getByText(/^Test event sent: message /).innerText()
  const messageId = /message (\S+)\./.exec(note)?.[1] ?? ''
  // No reload and no click: the page reads the attempts again until the new one is answered.
  await page.getByTestId('delivery').filter({ hasText: 'thanks, got it' }).nth(before).waitFor()
  t.pass('the new attempt showed by itself')
  await screenshot(page, 'portal-endpoint')

  await page.getByTestId('delivery').getByRole('link', { name: messageId }).first().click()
  await page.getByRole('heading', { level: 1, name: `Message ${messageId}` }).waitFor()
  t.equal(await page.getByTestId('message-type').innerText(), 'invoice.paid', 'its type')
  t.match(await page.getByTestId('payload').textContent(), /"invoiceId"/, 'its payload')
  const detail = page.getByTestId('attempt-detail').first()
  await detail.locator('summary').click()
  t.match(await detail.innerText(), new RegExp(`webhook-id\\s+${messageId}`), 'the request headers')
  t.match(await detail.innerText(), /webhook-signature\s+v1,\S{0,8}…/, 'the signature cut short')
  t.match(await detail.innerText(), /x-receiver\s+acme-edge-7/, 'the answer\'s headers')
  t.match(await detail.getByTestId('response-body').innerText(), /thanks, got it/, 'and its body')
  await screenshot(page, 'portal-message')

  // A success sent again would be a duplicate: it asks first. Counted are the page's retry calls and this
  // message's POSTs (acmeDown's scheduled retries may reach the receiver meanwhile).
  const retries: string[] = []
  page.on('request', (request) => { if (request.url().endsWith('/retry')) retries.push(request.url()) })
  const posts = (): number => receiver.received.filter((one) => one.headers['webhook-id'] === messageId).length
  const sentBefore = posts()
  const row = page.getByTestId('delivery').first()
  await row.getByRole('button', { name: /^Send again: delivery / }).click()
  await row.getByText('It was delivered. Send a duplicate?').waitFor()
  await row.getByRole('button', { name: 'Cancel' }).click()
  await row.getByRole('button', { name: /^Send again: delivery / }).waitFor()
  t.same(retries, [], 'no retry asked without the confirmation')
  t.equal(posts(), sentBefore, 'nothing sent without the confirmation')

  // A failure retried by hand shows as such.
  await page.goto(`${base}/admin/portal/#/endpoints/${acmeDown.id}`)
  const failed = page.getByTestId('delivery').filter({ hasText: 'down for maintenance' }).first()
  await failed.getByRole('button', { name: /^Retry: delivery / }).click()
  await page.getByText('Retry queued').waitFor()
  await page.getByTestId('attempt').filter({ hasText: 'Hand retry' }).first().waitFor()
  t.ok((await deliveries(acmeDown.id)).some((d) => d.trigger === 'retry'), 'the log says it was a hand retry, not attempt 1 again')
  t.same(pageErrors(errors), [])
})

t.test('the catalog: each type with its description, schema and example; verify in your code: the docs\' recipes as written', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-catalog-last')
  await page.getByRole('link', { name: 'Event types' }).click()
  const type = page.getByTestId('event-type').filter({ hasText: 'invoice.paid' })
  await type.getByText('Schema of invoice.paid').click()
  t.match(await type.getByTestId('schema').textContent(), /"invoiceId"/, 'its schema')
  await type.getByText('Example of invoice.paid').click()
  const check = new AjvModule.default({ strict: false }).compile(INVOICE_PAID)
  t.ok(check(JSON.parse(await type.getByTestId('example').textContent() ?? '')), 'an example that fits it')
  await screenshot(page, 'portal-event-types')
  await page.getByRole('link', { name: 'Verify in your code' }).click()
  const snippet = page.getByTestId('snippet')
  await snippet.waitFor()
  t.equal(await snippet.textContent(), docsBlock('verify-webhook.mjs: Node without a package'), 'Node')
  await page.getByRole('button', { name: 'Python', exact: true }).click()
  t.equal(await snippet.textContent(), docsBlock('verify_webhook.py: Python, standard library only'), 'Python')
  await page.getByRole('button', { name: 'Go', exact: true }).click()
  t.equal(await snippet.textContent(), docsBlock('verify.go: Go 1.18 or later, standard library only'), 'Go')
  await screenshot(page, 'portal-verify')
  t.same(pageErrors(errors), [])
})

t.test('a read-only link shows the same records and offers no change', async (t) => {
  const reader = await admin.send<{ url: string }>('POST', '/portal/tokens', { tenant: 'acme', scopes: ['read'] })
  const { page, errors } = await openPortal(t, 'portal-read-only-last', reader.url)
  await page.getByTestId('tenant').getByText('acme (read only)', { exact: false }).waitFor()
  await page.getByTestId('endpoint').first().waitFor()
  t.equal(await page.getByRole('button', { name: 'Add endpoint' }).count(), 0, 'no Add endpoint')
  await openEndpoint(page, acme)
  t.match(await page.getByTestId('types').innerText(), /invoice\.paid/, 'its subscriptions, as text')
  for (const name of ['Reveal', 'Rotate secret…', 'Send test event', 'Disable', 'Save subscriptions', 'Recover']) {
    t.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name}`)
  }
  t.equal(await page.getByRole('button', { name: /^(Retry|Send again): / }).count(), 0, 'no retry')
  t.same(pageErrors(errors), [])
})

t.test('by keyboard alone: from the list to an endpoint\'s page, its secret revealed', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-keyboard-last')
  await page.setViewportSize({ width: 1280, height: 900 })
  const focused = async (): Promise<string> => await page.evaluate(() => document.activeElement?.textContent?.trim() ?? '')
  const tabTo = async (text: string): Promise<void> => {
    for (let i = 0; i < 60 && await focused() !== text; i++) await page.keyboard.press('Tab')
    t.equal(await focused(), text, `reached ${text} by Tab`)
  }
  await page.getByTestId('endpoint').first().waitFor()
  await tabTo(acme.url)
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { level: 1, name: acme.url }).waitFor()
  await settled(page)
  await tabTo('Reveal')
  await page.keyboard.press('Enter')
  await page.getByTestId('secret').waitFor()
  t.match(await page.getByTestId('secret').innerText(), /^whsec_/, 'the secret, revealed from the keyboard')
  t.same(pageErrors(errors), [])
})

t.test('a revoked, forged or missing link says so, and is not a broken page', async (t) => {
  const { page, errors } = await openPortal(t, 'portal-expired-last')
  await admin.send('POST', '/portal/tenants/acme/revoke')
  await page.reload()
  await page.getByRole('heading', { level: 1, name: 'This link has expired' }).waitFor()
  t.equal(await page.evaluate(() => sessionStorage.getItem('anvil-portal-token')), null, 'the dead token is dropped')
  t.same(await seriousViolations(page), [])
  const forged = await openPortal(t, 'portal-forged', `${base}/admin/portal/#code=anvil_pl_forged`)
  await forged.page.getByRole('heading', { level: 1, name: 'This link has expired' }).waitFor()
  const none = await openPortal(t, 'portal-no-link', `${base}/admin/portal/`)
  await none.page.getByRole('heading', { level: 1, name: 'No access link' }).waitFor()
  // An operational event's link into the portal, opened in a tab with no portal link: where to go, and which endpoint.
  const deep = await openPortal(t, 'portal-deep-link', `${base}/admin/portal/#/endpoints/${acme.id}`)
  await deep.page.getByRole('heading', { level: 1, name: 'No access link' }).waitFor()
  t.match(await deep.page.locator('main').innerText(), new RegExp(`Then open endpoint ${acme.id} under Endpoints`), 'it names the endpoint')
  t.same([...pageErrors(errors), ...pageErrors(forged.errors), ...pageErrors(none.errors), ...pageErrors(deep.errors)], [], 'no error but the 401s the page explains')
})
