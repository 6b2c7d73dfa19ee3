/**
 * The console's re-send of outgoing messages that ended failed, in a real Chromium against a real `anvil serve`
 * and `anvil worker` (test/helpers/console.ts, whose outgoing schedule tries a message twice, 5 s apart, then
 * fails it for good): one message re-sent from its row on the Undelivered page, the others at once after a dry
 * run that lists them. The receiver answers 500 until the test fixes it. Each message goes to an endpoint of its
 * own, each of a tenant of its own (a re-send goes to every endpoint of the message's tenant and type): two failures
 * each stay under the circuit breaker's threshold (5 in a row), whose 30 s open window would otherwise hold back
 * both the last failure and the first re-send.
 */
import t from 'tap'
import { pageErrors, settled, startConsole, type ConsoleHarness } from '../helpers/console.js'
import { startReceiver } from '../helpers/receiver.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

// A browser, serve and worker on a loaded 2-core machine: more than tap's 120 s default.
t.setTimeout(240_000)
let { adminPost, adminGet, loggedIn, checkAccessible } = {} as ConsoleHarness
beforeStep(t, async () => { ({ adminPost, adminGet, loggedIn, checkAccessible } = await startConsole(t)) })
const broken = new Set(['/resend'])
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  res.statusCode = broken.has(req.url) ? 500 : 200
  res.end(res.statusCode === 200 ? 'ok' : 'down')
}), async (receiver) => await receiver.close())

interface Delivery { id: string, messageId: string, status: string }
/** The three endpoints' deliveries, together. */
const deliveries = async (endpoints: Array<{ id: string }>): Promise<Delivery[]> => (await Promise.all(endpoints.map(async (endpoint) =>
  (await adminGet<{ items: Delivery[] }>(`/deliveries?endpoint=${endpoint.id}&limit=100`)).items))).flat()
const undelivered = async (endpoints: Array<{ id: string }>): Promise<unknown[]> => (await Promise.all(endpoints.map(async (endpoint) =>
  (await adminGet<{ items: unknown[] }>(`/undelivered?endpoint=${endpoint.id}`)).items))).flat()

t.test('undelivered: a message that failed for good is re-sent from its row, the others at once after a dry run', async (t) => {
  const endpoints: Array<{ id: string }> = []
  for (let i = 0; i < 3; i++) endpoints.push(await adminPost<{ id: string }>('/endpoints', { url: `${receiver.url}/resend`, tenant: `resend-${i}`, description: 'resend me' }))
  const ids: string[] = []
  for (const endpoint of endpoints) ids.push((await adminPost<{ messageId: string }>(`/endpoints/${endpoint.id}/test`)).messageId)
  interface Plan { items: Array<{ messageId: string, endpointIds: string[] }> }
  // Both attempts of each failed (at once and 5 s later) and its job is finished: a dry run would send each again.
  // A loaded machine may be slow to get there, hence the longer guard.
  await eventually('(adminPost<Plan>(\'/messages/resend\', { dryRun: true })).items .filter…', async () => (await adminPost<Plan>('/messages/resend', { dryRun: true })).items
    .filter((item) => ids.includes(item.messageId) && item.endpointIds.length === 1).length === 3, 120000)
  broken.delete('/resend')
  const [first, ...rest] = ids as [string, ...string[]]
  const { page, errors } = await loggedIn(t, 'messages-resent')
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Undelivered' }).click()
  await settled(page)
  await page.getByRole('button', { name: `Re-send message ${first}` }).click()
  await page.getByText('re-sent to 1 endpoint').waitFor()
  await eventually('(deliveries(endpoints)).some((d) => d.messageId === first && d.stat…', async () => (await deliveries(endpoints)).some((d) => d.messageId === first && d.status === 'success'))

  const bulk = page.getByRole('region', { name: 'Failed messages' })
  await bulk.getByRole('button', { name: 'Re-send failed messages…' }).click()
  const confirm = bulk.getByRole('alertdialog')
  await confirm.waitFor()
  t.equal(await confirm.locator('#resend-text').innerText(), 'Re-send 2 messages, 2 deliveries in all? Endpoints that had a message never get it twice.')
  t.same((await confirm.getByTestId('resend-plan').allInnerTexts()).map((row) => row.split(/\s+/)[0]), rest, 'the dry run: the two others, oldest first')
  await checkAccessible(t, page, 'undelivered, a re-send to confirm')
  await confirm.getByRole('button', { name: 'Re-send 2 messages' }).click()
  await bulk.getByText('Re-sent 2 messages, 2 deliveries in all').waitFor()
  await eventually('(deliveries(endpoints)).filter((d) => d.status === \'success\').lengt…', async () => (await deliveries(endpoints)).filter((d) => d.status === 'success').length === 3)
  const got = receiver.received.filter((r) => r.url === '/resend')
  for (const id of ids) t.equal(got.filter((r) => r.headers['webhook-id'] === id).length, 3, `${id}: two failures, then delivered once`)
  t.same(await undelivered(endpoints), [], 'nothing undelivered is left')
  t.same(pageErrors(errors), [])
})
