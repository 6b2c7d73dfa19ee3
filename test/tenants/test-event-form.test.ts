/**
 * The portal's "Send test event" form obeys the catalog (issue 33, item 5), in a real Chromium against a real admin
 * API, PostgreSQL and Redis: its sample of a type honours `pattern` (`^inv_`) and `format`, fits the schema (Ajv
 * says so) and is sent as it is; a type whose pattern the sampler cannot make says the sample needs editing, sent
 * unedited is refused by the server with the publish's code, and sent once edited goes.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { AddressInfo } from 'node:net'
import AjvModule from 'ajv'
import addFormatsModule from 'ajv-formats'
import anvilAdmin from '../../plugins/admin/admin.js'
import { consoleErrors, openBrowser, screenshot } from '../helpers/browser.js'
import { settled } from '../helpers/console.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

t.setTimeout(120_000)
const TOKEN = 'test-event-form-admin-token-0123456789'
const INVOICE = {
  type: 'object',
  required: ['id', 'amount', 'currency', 'email'],
  properties: {
    id: { type: 'string', pattern: '^inv_[0-9a-z]+$' },
    amount: { type: 'integer', minimum: 1 },
    currency: { type: 'string', pattern: '^(EUR|USD)-\\d{3}$' },
    email: { type: 'string', format: 'email' },
    placedAt: { type: 'string', format: 'date-time' }
  },
  additionalProperties: false
}
// Unicode property escapes: randexp reads `\p{Lu}` as the letters p, {, L…, which the pattern does not match.
const UNICODE = { type: 'object', required: ['name'], properties: { name: { type: 'string', pattern: '^\\p{Lu}\\p{Ll}+$' } } }

const fixture = outboundFixture()
const outbound = beforeAll(t, async () => fixture.open())
let base: string
let endpointId: string
beforeStep(t, async () => {
  await outbound.eventTypes.put('invoice.paid', { description: 'An invoice was paid.', schema: INVOICE })
  await outbound.eventTypes.put('person.named', { description: 'A person was named.', schema: UNICODE })
  endpointId = (await outbound.endpoints.create({ url: 'https://hooks.acme.example/in', tenant: 'acme', eventTypes: ['invoice.paid', 'person.named'] })).id
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, outbound })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => await app.close())
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
})

const kept = async (type: string): Promise<Array<{ data: string }>> =>
  await fixture.db.query<{ data: string }>('SELECT data FROM anvil.outbox WHERE type = $1 ORDER BY created_at', [type])

t.test('the sample honours pattern and format, fits the schema and is sent; one it cannot make says so, is refused unedited, goes edited', async (t) => {
  const context = await openBrowser(t)
  const page = await context.newPage()
  const errors = consoleErrors(page)
  t.teardown(async () => { await screenshot(page, 'tenants-test-event-form-last') })
  const link = await (await fetch(`${base}/admin/portal/tokens`, {
    method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ tenant: 'acme' })
  })).json() as { url: string }
  await page.goto(link.url)
  await page.getByTestId('endpoint').first().waitFor()
  await page.getByTestId('endpoint').getByRole('link', { name: 'https://hooks.acme.example/in' }).click()
  await settled(page)

  const form = page.getByRole('form', { name: 'Test event to https://hooks.acme.example/in' })
  t.equal(await form.getByLabel('Event type').inputValue(), 'invoice.paid')
  const sample = JSON.parse(await form.getByRole('textbox').inputValue()) as Record<string, unknown>
  t.match(sample, { id: /^inv_/, currency: /^(EUR|USD)-\d{3}$/, email: /@/ }, 'pattern and format honoured')
  const ajv = new AjvModule.default({ strict: false })
  addFormatsModule.default(ajv)
  const fits = ajv.compile(INVOICE)
  t.ok(fits(sample), `the sample fits the schema: ${JSON.stringify(fits.errors)}`)
  t.equal(await form.getByTestId('sample-needs-editing').count(), 0, 'no note: the sample fits')
  await form.getByRole('button', { name: 'Send test event' }).click()
  await page.getByText(/^Test event sent: message /).waitFor()
  t.same((await kept('invoice.paid')).map((row) => JSON.parse(row.data)), [sample], 'sent as it was made')

  await form.getByLabel('Event type').selectOption('person.named')
  const note = form.getByTestId('sample-needs-editing')
  t.match(await note.innerText(), /This sample may not fit the schema of person\.named: edit it before sending\. Where: \/name: pattern \^\\p\{Lu\}/,
    'the form says the sample needs editing, and where')
  await form.getByRole('button', { name: 'Send test event' }).click()
  t.match(await form.getByRole('alert').innerText(), /ANVIL_ERR_INVALID_MESSAGE/, 'sent unedited, the server refuses it with the publish\'s code')
  t.same(await kept('person.named'), [], 'and keeps nothing')
  await form.getByRole('textbox').fill('{ "name": "Ada" }')
  t.equal(await note.count(), 0, 'edited, the note goes')
  await form.getByRole('button', { name: 'Send test event' }).click()
  await eventually('the edited person.named event kept', async () => (await kept('person.named')).length === 1)
  t.same(errors.filter((e) => !/status of 400/.test(e)), [], 'no page error but the refusal')
})
