/**
 * The console's event-type catalog page in a real Chromium against a real `anvil serve` (test/helpers/console.ts):
 * an empty catalog says so; each type shows its name, description and a deprecated badge, deprecated types last;
 * its schema opens as indented JSON text; markup in a description or a schema shows as characters and never runs;
 * the page links the catalog as JSON Schema, which the session's cookie opens; axe finds nothing serious.
 */
import t from 'tap'
import { midWordBreaks } from '../helpers/browser.js'
import { settled, startConsole, TOKEN, type ConsoleHarness } from '../helpers/console.js'
import { beforeStep } from '../helpers/before-all.js'

t.setTimeout(300_000)
let { base, loggedIn, checkAccessible } = {} as ConsoleHarness
// The catalog is the server's alone: no event is handled and no webhook sent, so no worker.
beforeStep(t, async () => { ({ base, loggedIn, checkAccessible } = await startConsole(t, { worker: false })) })

const MARKUP = '<img src=x onerror="window.__anvilXss=1">Paid <b>in full</b>'
const PAID_SCHEMA = {
  type: 'object',
  required: ['amount', 'currency'],
  properties: { amount: { type: 'integer', minimum: 0 }, currency: { type: 'string', description: '<script>window.__anvilXss=2</script>ISO 4217' } }
}

async function put (name: string, body: object): Promise<void> {
  const res = await fetch(`${base}/admin/event-types/${name}`, {
    method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body)
  })
  if (res.status !== 200) throw new Error(`PUT ${name}: ${res.status} ${await res.text()}`)
}

t.test('an empty catalog says so, and how to fill it', async (t) => {
  const { page, errors } = await loggedIn(t, 'event-types-empty')
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Event types' }).click()
  await page.getByRole('heading', { level: 1, name: 'Event types' }).waitFor()
  await page.getByRole('heading', { level: 2, name: '0 event types' }).waitFor()
  t.match(await page.locator('main').innerText(), /No event type yet: define them in code with defineEventTypes/)
  t.same(errors, [])
})

t.test('each type with its description and badge, its schema as text; markup shows as characters and never runs', async (t) => {
  await put('invoice.paid', { description: MARKUP, schema: PAID_SCHEMA })
  await put('user.legacy', { description: 'The old user event', schema: { type: 'object' }, deprecated: true })
  await put('order.shipped', { schema: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } } } })
  const { page, errors } = await loggedIn(t, 'event-types')
  await page.goto(`${base}/admin/console/#/event-types`)
  await page.getByRole('heading', { level: 2, name: '3 event types' }).waitFor()
  t.equal(await page.getByRole('link', { name: 'Event types' }).getAttribute('aria-current'), 'page')

  const entries = page.getByTestId('event-type')
  t.same(await entries.locator('h3 code').allTextContents(), ['invoice.paid', 'order.shipped', 'user.legacy'], 'by name, the deprecated one last')
  const paid = entries.filter({ hasText: 'invoice.paid' })
  t.equal(await paid.locator('p').textContent(), MARKUP, 'the description as its characters')
  t.equal(await entries.filter({ hasText: 'order.shipped' }).locator('p').textContent(), 'No description.')
  const legacy = entries.filter({ hasText: 'user.legacy' })
  t.equal(await legacy.locator('.status').textContent(), 'deprecated', 'a badge on the deprecated type')
  t.equal(await page.locator('main .status', { hasText: 'deprecated' }).count(), 1, 'and on no other')

  await paid.getByText('Schema of invoice.paid').click()
  const schema = paid.getByTestId('schema')
  await schema.waitFor()
  const shown = await schema.textContent()
  t.same(JSON.parse(shown ?? ''), PAID_SCHEMA, 'the schema, whole, as JSON text')
  t.match(shown, /\n {2}"type": "object"/, 'indented')
  t.equal(await page.locator('main img, main script, main b').count(), 0, 'no element made from a description or a schema')
  t.equal(await page.evaluate(() => (window as unknown as { __anvilXss?: number }).__anvilXss), undefined, 'nothing ran')
  await checkAccessible(t, page, 'the catalog with a schema open')
  t.same(await midWordBreaks(page), [], 'no word broken')
  t.same(errors, [])
})

t.test('the page links the catalog as JSON Schema, which the console\'s session opens', async (t) => {
  const { page, errors } = await loggedIn(t, 'event-types-schema-link')
  await page.goto(`${base}/admin/console/#/event-types`)
  const link = page.getByRole('link', { name: 'the catalog as JSON Schema' })
  await link.waitFor()
  await settled(page)
  const href = await link.getAttribute('href')
  t.equal(href, '/admin/event-types/schema.json')
  const schema = await page.evaluate(async (url) => await (await fetch(url, { credentials: 'same-origin' })).json(), href as string)
  t.match(schema, { $schema: 'https://json-schema.org/draft/2020-12/schema', $defs: { InvoicePaid: { properties: { type: { const: 'invoice.paid' } } }, UserLegacy: { deprecated: true } } })
  t.same(errors, [])
})
