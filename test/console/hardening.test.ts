/**
 * The console in a real Chromium against a real `anvil serve` and `anvil worker` (test/helpers/console.ts): a
 * payload too deep for a JSON view opens as text, and Log out everywhere ends every session on the server.
 */
import t from 'tap'
import { signRequest } from '../../src/testing/sign-request.js'
import { pageErrors, startConsole, STRIPE_SECRET, TOKEN, type ConsoleHarness } from '../helpers/console.js'
import { beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

let { base, context, adminGet, loggedIn } = {} as ConsoleHarness
beforeStep(t, async () => { ({ base, context, adminGet, loggedIn } = await startConsole(t)) })

t.test('an event whose payload nests 5,000 deep opens as text: no 500, no error in the page', async (t) => {
  // Written as text: JSON.stringify of the value would itself run out of stack in this process.
  const body = `{"id":"evt_console_deep","object":"event","type":"invoice.deep","data":{"object":${'['.repeat(5000)}${']'.repeat(5000)}}}`
  const signed = signRequest('stripe', { body, secret: STRIPE_SECRET })
  t.equal((await fetch(`${base}/webhooks/stripe`, { method: 'POST', headers: signed.headers, body: signed.body })).status, 202)
  await eventually('(adminGet<{ items: unknown[] }>(\'/events?type=invoice.deep&status=don…', async () => (await adminGet<{ items: unknown[] }>('/events?type=invoice.deep&status=done')).items.length === 1)
  const { page, errors } = await loggedIn(t, 'event-deep-payload')
  const answers: number[] = []
  page.on('response', (response) => { if (response.url().includes('/admin/events/evt_console_deep')) answers.push(response.status()) })
  await page.goto(`${base}/admin/console/#/events/evt_console_deep`)
  await page.getByTestId('event-status').getByText('done').waitFor()
  const shown = await page.getByTestId('payload').textContent() ?? ''
  t.ok(shown.includes('['.repeat(5000) + ']'.repeat(5000)), 'the payload, as its text')
  t.same(answers, [200])
  t.same(pageErrors(errors), [])
})

t.test('Log out everywhere ends this session and every other one on the server', async (t) => {
  const { page, errors } = await loggedIn(t, 'logout-everywhere')
  const [cookie] = await context.cookies()
  const browserCookie = `${cookie?.name ?? ''}=${cookie?.value ?? ''}`
  const login = await fetch(`${base}/admin/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: TOKEN }) })
  const other = { cookie: String(login.headers.get('set-cookie')).split(';')[0] ?? '', csrf: (await login.json() as { csrfToken: string }).csrfToken }
  const browserCsrf = (await (await fetch(`${base}/admin/session`, { headers: { cookie: browserCookie } })).json() as { csrfToken: string }).csrfToken
  const change = async (session: { cookie: string, csrf: string }): Promise<number> =>
    (await fetch(`${base}/admin/events/replay`, { method: 'POST', headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' }, body: '{"dryRun":true}' })).status
  t.equal(await change(other), 200, 'another session, open')
  await page.getByRole('button', { name: 'Log out everywhere' }).click()
  await page.getByLabel('Admin token').waitFor()
  t.equal(await change({ cookie: browserCookie, csrf: browserCsrf }), 401, 'this browser\'s old cookie and CSRF token: refused')
  t.equal(await change(other), 401, 'the other session: ended too')
  t.same(pageErrors(errors), [])
})
