/**
 * The console's flows that need real failures behind them, in a real Chromium against a real `anvil serve` and
 * `anvil worker` (test/helpers/console.ts): the diff of a redelivered event id, the undelivered view, retrying a
 * failed delivery, and recovering an endpoint since a time (re-sending failed messages: test/console/resend.test.ts).
 * Each test ends with a screenshot under .tap/console/.
 *
 * The receivers answer 500 until the test fixes them. The worker's outgoing schedule (ANVIL_OUTBOUND_RETRY_SCHEDULE
 * 5000): a message is tried at once and again about 5 s later, then failed for good, so once two failed attempts
 * are in, a success that follows is the console's doing.
 */
import t from 'tap'
import { pageErrors, settled, startConsole, type ConsoleHarness } from '../helpers/console.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

let { base, sendStripe, adminGet, adminPost, loggedIn, checkAccessible } = {} as ConsoleHarness
beforeStep(t, async () => { ({ base, sendStripe, adminGet, adminPost, loggedIn, checkAccessible } = await startConsole(t)) })

/** Paths the receiver answers 500 on, until a test takes them out. */
const broken = new Set(['/retry', '/recover'])
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  res.statusCode = broken.has(req.url) ? 500 : 200
  res.end(res.statusCode === 200 ? 'ok' : 'down')
}), async (receiver) => await receiver.close())

interface Delivery { id: string, messageId: string, status: string, httpStatus: number | null, attempt: number }
interface Undelivered { messageId: string, endpointId: string, attempts: number }
const deliveries = async (endpoint: string): Promise<Delivery[]> =>
  (await adminGet<{ items: Delivery[] }>(`/deliveries?endpoint=${endpoint}&limit=100`)).items
const undelivered = async (endpoint: string): Promise<Undelivered[]> =>
  (await adminGet<{ items: Undelivered[] }>(`/undelivered?endpoint=${endpoint}`)).items

// Two failing endpoints, made through the API (the console's endpoint form has its own test): one message to
// the first, two to the second. Their failures settle while the diff test runs.
let since: string
let retryEndpoint: { id: string }, recoverEndpoint: { id: string }
beforeStep(t, async () => {
  since = new Date(Date.now() - 1000).toISOString()
  retryEndpoint = await adminPost<{ id: string }>('/endpoints', { url: `${receiver.url}/retry`, description: 'retry me' })
  recoverEndpoint = await adminPost<{ id: string }>('/endpoints', { url: `${receiver.url}/recover`, description: 'recover me' })
  await adminPost(`/endpoints/${retryEndpoint.id}/test`)
  for (let i = 0; i < 2; i++) await adminPost(`/endpoints/${recoverEndpoint.id}/test`)
})
/** Both attempts of every message failed: nothing more is tried for minutes. */
const failuresSettled = async (): Promise<void> => { await eventually('both attempts of every message failed', async () =>
  (await deliveries(retryEndpoint.id)).filter((d) => d.status === 'failed').length === 2 &&
  (await deliveries(recoverEndpoint.id)).filter((d) => d.status === 'failed').length === 4) }

t.test('one event: a redelivery of its id with another payload shows what changed, credentials redacted', async (t) => {
  await sendStripe('evt_redelivered', 'invoice.updated', { amount: 100, currency: 'eur' }, 'stripe-resent')
  await eventually('(adminGet<{ status?: string }>(\'/events/evt_redelivered\')).status ===…', async () => (await adminGet<{ status?: string }>('/events/evt_redelivered')).status === 'done')
  await sendStripe('evt_redelivered', 'invoice.updated', { amount: 250, currency: 'eur' }, 'stripe-resent')
  await eventually('event.status === \'done\' && event.deliveries === 2', async () => {
    const event = await adminGet<{ status?: string, deliveries?: number }>('/events/evt_redelivered')
    return event.status === 'done' && event.deliveries === 2
  })
  const { page, errors } = await loggedIn(t, 'event-redelivery-diff')
  await page.goto(`${base}/admin/console/#/events/evt_redelivered`)
  const diff = page.getByRole('region', { name: 'Changed since the previous delivery of this id' })
  await diff.waitFor()
  t.match(await diff.getByRole('row', { name: /^data\.object\.amount/ }).innerText(), /data\.object\.amount\s+100\s+250/, 'the changed field, before and after')
  t.equal(await diff.getByRole('row', { name: /currency/ }).count(), 0, 'an unchanged field is not listed')
  const signature = diff.getByRole('row', { name: /header stripe-signature/ })
  t.match(await signature.innerText(), /header stripe-signature\s+\[redacted\]\s+\[redacted\]/, 'the signature changed, and shows redacted as in the headers')
  t.notMatch(await diff.innerText(), /v1=/, 'no signature value on the page')
  await checkAccessible(t, page, 'one event with a diff')
  t.same(pageErrors(errors), [])
})

t.test('undelivered: the messages whose endpoint has not succeeded, with their attempts and last answer', async (t) => {
  await failuresSettled()
  const { page, errors } = await loggedIn(t, 'undelivered')
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Undelivered' }).click()
  await page.getByRole('heading', { level: 1, name: 'Undelivered' }).waitFor()
  await settled(page)
  t.equal(await page.locator('caption').textContent(), '3 messages not yet delivered')
  const rows = page.getByRole('row').filter({ hasText: 'anvil.test' })
  t.equal(await rows.count(), 3)
  const retryRows = await rows.filter({ hasText: retryEndpoint.id }).allInnerTexts()
  const [message] = (await undelivered(retryEndpoint.id)).map((u) => u.messageId)
  t.equal(retryRows.length, 1)
  t.match(retryRows[0], new RegExp(`${message ?? 'none'}\\s+${retryEndpoint.id}\\s+anvil\\.test\\s+2\\s+.+\\s+500\\s+HTTP 500`), 'message, endpoint, type, 2 attempts, HTTP 500 and its error')
  t.equal(await rows.filter({ hasText: recoverEndpoint.id }).count(), 2)
  await checkAccessible(t, page, 'undelivered, with rows')
  // Each endpoint leads to its delivery log, where a failed delivery can be retried.
  await page.getByRole('link', { name: `Deliveries of endpoint ${retryEndpoint.id}` }).click()
  await page.waitForURL(new RegExp(`#/deliveries\\?endpoint=${retryEndpoint.id}$`))
  await page.locator('caption', { hasText: /^2 deliveries$/ }).waitFor()
  t.equal((await page.getByTestId('delivery').allInnerTexts()).filter((row) => /failed\s+500/.test(row)).length, 2, 'its two failed attempts')
  await page.goBack()
  await page.getByRole('heading', { level: 1, name: 'Undelivered' }).waitFor()
  await settled(page)
  t.same(pageErrors(errors), [])
})

t.test('deliveries: a failed delivery retried from the log succeeds once its receiver is fixed', async (t) => {
  await failuresSettled()
  broken.delete('/retry')
  const { page, errors } = await loggedIn(t, 'delivery-retried')
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Deliveries' }).click()
  await page.getByLabel('Endpoint id').fill(retryEndpoint.id)
  await page.getByLabel('Status').selectOption('failed')
  await page.getByRole('button', { name: 'Apply filter' }).click()
  await page.waitForURL(/#\/deliveries\?endpoint=[^&]+&status=failed/)
  // The caption changes once the filtered log is in (the whole log has six deliveries).
  await page.locator('caption', { hasText: /^2 deliveries$/ }).waitFor()
  const failed = page.getByTestId('delivery')
  t.equal(await failed.count(), 2, 'two failed attempts')
  t.match(await failed.first().innerText(), /failed\s+500\s+Attempt 2\s+\d+ ms/, 'the last: failed, HTTP 500, attempt 2')
  await checkAccessible(t, page, 'deliveries, failed')
  const got = receiver.received.length
  await failed.first().getByRole('button', { name: /^Retry: delivery / }).click()
  await failed.first().getByText('retry queued').waitFor()

  await eventually('(deliveries(retryEndpoint.id)).some((d) => d.status === \'success\')', async () => (await deliveries(retryEndpoint.id)).some((d) => d.status === 'success'))
  t.ok(receiver.received.slice(got).some((r) => r.url === '/retry'), 'the receiver got it again')
  await page.getByLabel('Status').selectOption('success')
  await page.getByRole('button', { name: 'Apply filter' }).click()
  await page.waitForURL(/status=success/)
  await page.locator('caption', { hasText: /^1 delivery$/ }).waitFor()
  t.match(await page.getByTestId('delivery').first().innerText(), /success\s+200\s+Hand retry\s+\d+ ms/, 'the retry, delivered, and shown as a hand retry')
  t.same(await undelivered(retryEndpoint.id), [], 'and no longer undelivered')
  t.same(pageErrors(errors), [])
})

t.test('endpoints: an endpoint that failed, once fixed, is recovered since a time and its messages delivered', async (t) => {
  await failuresSettled()
  const { page, errors } = await loggedIn(t, 'endpoint-recovered')
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Endpoints' }).click()
  const card = page.getByTestId('endpoint').filter({ hasText: `${receiver.url}/recover` })
  await card.waitFor()
  await settled(page)
  t.equal(await card.getByTestId('state').innerText(), 'failing', 'shown failing')
  t.equal(await card.getByTestId('success-rate').innerText(), '0 %', 'no success in a day')
  await card.getByRole('link', { name: `${receiver.url}/recover` }).click()
  await page.getByRole('heading', { level: 1, name: `${receiver.url}/recover` }).waitFor()
  broken.delete('/recover')
  const recover = page.getByRole('form', { name: 'Recover failed messages' })
  // The date control takes the browser's local time, to the minute: a minute early takes in the same failures.
  await recover.getByLabel('Re-send what failed since').fill(await page.evaluate((iso) => {
    const date = new Date(iso)
    return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
  }, since))
  await recover.getByRole('button', { name: 'Recover' }).click()
  await page.getByText('Re-sending 2 messages: they show below as they go').waitFor()
  await checkAccessible(t, page, 'an endpoint, after a recovery')

  await eventually('(deliveries(recoverEndpoint.id)).filter((d) => d.status === \'success\'…', async () => (await deliveries(recoverEndpoint.id)).filter((d) => d.status === 'success').length === 2)
  // No reload: the attempts are read again until the re-sent ones are in.
  const attempts = page.getByRole('region', { name: 'Delivery attempts' })
  await attempts.locator('caption', { hasText: /^6 deliveries$/ }).waitFor()
  // A re-sent attempt's row shows as soon as it starts; the page reads it again until its answer is in.
  const recovered = async (): Promise<string[]> => (await attempts.getByTestId('delivery').allInnerTexts()).filter((row) => /success\s+200\s+Recovered\s/.test(row))
  await eventually('both re-sent attempts shown answered', async () => (await recovered()).length >= 2)
  const rows = await attempts.getByTestId('delivery').allInnerTexts()
  t.equal(rows.length, 6, 'four failures, then two successes')
  t.equal(rows.filter((row) => /success\s+200\s+Recovered\s/.test(row)).length, 2, 'both messages delivered, shown as recovered')
  t.same(await undelivered(recoverEndpoint.id), [], 'nothing undelivered is left')
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Undelivered' }).click()
  await settled(page)
  await page.getByText('0 messages not yet delivered').waitFor()
  t.same(pageErrors(errors), [])
})
