/**
 * The portal page in a product's own settings page: `anvilAdmin({ portal: { frameAncestors } })` lets those
 * origins frame `<prefix>/portal/` (CSP `frame-ancestors`, and no X-Frame-Options), none by default, and never the
 * console. Checked on the headers, and in a real Chromium: a page on another origin frames the portal, opened
 * with a tenant's link, when allowed, and is refused when not. A link minted with `embed: true` drops the portal's
 * top bar and tells the host its height: the host page is docs/portal.md's snippet, as written.
 */
import t from 'tap'
import Fastify from 'fastify'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import anvilAdmin from '../../plugins/admin/admin.js'
import { consoleErrors, openBrowser, screenshot } from '../helpers/browser.js'
import { docsShot } from '../helpers/visual.js'

import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'
import { docsSnippet } from '../helpers/portal.js'

t.setTimeout(120_000)
const TOKEN = 'portal-frame-admin-token-0123456789'
const fixture = outboundFixture()
const outbound = beforeAll(t, async () => fixture.open())
beforeStep(t, async () => {
  await outbound.eventTypes.put('invoice.paid', { description: 'An invoice was paid in full.', schema: { type: 'object', properties: { amount: { type: 'integer' } } } })
  await outbound.eventTypes.put('customer.created', { description: 'A customer signed up.', schema: { type: 'object' } })
  await outbound.endpoints.create({ url: 'https://hooks.acme.example/orders', tenant: 'acme', eventTypes: ['invoice.paid'], description: 'Order sync' })
  await outbound.endpoints.create({ url: 'https://hooks.globex.example/in', tenant: 'globex' })
})

// The product's settings page, on another origin (localhost, where Anvil is 127.0.0.1): it frames `?src=`, with
// docs/portal.md's host snippet (`?embed`) or a fixed-height frame.
const SNIPPET = docsSnippet('<!-- Your settings page: the portal in a frame as tall as its content. -->')
const host = createServer((req, res) => {
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams
  const src = (query.get('src') ?? '').replace(/"/g, '&quot;')
  res.setHeader('content-type', 'text/html; charset=utf-8')
  const frame = query.has('embed')
    ? SNIPPET.replace('{PORTAL_URL}', src)
    : `<iframe src="${src}" title="Webhooks portal" style="width:100%;height:900px;border:1px solid #d1d5db;border-radius:8px;background:#fff"></iframe>`
  res.end(`<!doctype html><html lang="en"><head><title>Acme settings</title></head>
<body style="margin:0;font-family:system-ui,sans-serif;background:#f3f4f6">
<header style="padding:12px 24px;background:#4c1d95;color:#fff"><strong>Acme</strong> · Settings › Webhooks</header>
<main style="padding:24px"><h1 style="font-size:20px;margin:0 0 12px">Webhooks</h1>
${frame}
</main></body></html>`)
})
let hostOrigin: string
beforeStep(t, async () => {
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve))
  hostOrigin = `http://localhost:${(host.address() as AddressInfo).port}`
})
t.teardown(() => { host.closeAllConnections(); host.close() })

/** An admin API on a port of its own, with `portal` options, closed at the end. */
async function adminApp (portal?: { frameAncestors: string[] }): Promise<string> {
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, outbound, ...(portal === undefined ? {} : { portal }) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => await app.close())
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}
let closed: string, framable: string
beforeStep(t, async () => {
  closed = await adminApp()
  framable = await adminApp({ frameAncestors: [hostOrigin, 'https://*.acme.example'] })
})

const headers = async (url: string): Promise<{ csp: string, xfo: string | null }> => {
  const res = await fetch(url)
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
  return { csp: res.headers.get('content-security-policy') ?? '', xfo: res.headers.get('x-frame-options') }
}
const frameAncestors = (csp: string): string | undefined => /frame-ancestors ([^;]+)/.exec(csp)?.[1]

t.test('the header follows the option: \'none\' by default, the given origins with it; the console keeps \'none\'', async (t) => {
  const byDefault = await headers(`${closed}/admin/portal/`)
  t.equal(frameAncestors(byDefault.csp), "'none'", 'by default no one may frame the portal')
  t.equal(byDefault.xfo, 'SAMEORIGIN', 'and X-Frame-Options says so to old browsers')
  const given = await headers(`${framable}/admin/portal/`)
  t.equal(frameAncestors(given.csp), `${hostOrigin} https://*.acme.example`, 'the option\'s origins')
  t.equal(given.xfo, null, 'no X-Frame-Options, which cannot name an origin')
  t.match(given.csp, /default-src 'none'.*script-src 'self'/, 'the rest of the console\'s policy')
  for (const base of [closed, framable]) {
    const page = await headers(`${base}/admin/console/`)
    t.equal(frameAncestors(page.csp), "'none'", 'the console is never framed')
    t.equal(page.xfo, 'SAMEORIGIN')
  }
})

t.test('an origin that is not one is refused with one line', async (t) => {
  const app = Fastify()
  await t.rejects(async () => await app.register(anvilAdmin, { token: TOKEN, portal: { frameAncestors: ["https://a.example; script-src *"] } }), /portal\.frameAncestors\.0 must be an origin/)
  await app.close()
})

t.test('a page on an allowed origin frames the portal, opened with a tenant\'s link; another app refuses it', async (t) => {
  const context = await openBrowser(t)
  const mint = async (base: string, extra: object = {}): Promise<{ url: string }> => {
    const res = await fetch(`${base}/admin/portal/tokens`, {
      method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ tenant: 'acme', ...extra })
    })
    return await res.json() as { url: string }
  }
  const page = await context.newPage()
  const errors = consoleErrors(page)
  await page.goto(`${hostOrigin}/?src=${encodeURIComponent((await mint(framable)).url)}`)
  const frame = page.frameLocator('iframe')
  await frame.getByTestId('endpoint').first().waitFor()
  t.equal(await frame.getByTestId('endpoint').locator('.endpoint-url').innerText(), 'https://hooks.acme.example/orders', 'acme\'s endpoint, framed')
  t.notMatch(await frame.locator('main').innerText(), /globex/, 'nothing of globex')
  t.equal(await frame.getByRole('banner').count(), 1, 'a plain link keeps its top bar')
  t.same(errors, [])

  // Embedded: no bar of its own, and the host's frame takes the portal's height from its messages.
  const embedded = await context.newPage()
  const embedErrors = consoleErrors(embedded)
  await embedded.goto(`${hostOrigin}/?embed&src=${encodeURIComponent((await mint(framable, { embed: true, theme: { primaryColor: '#4c1d95' } })).url)}`)
  const inner = embedded.frameLocator('iframe')
  await inner.getByTestId('endpoint').first().waitFor()
  t.equal(await inner.getByRole('banner').count(), 0, 'no top bar when embedded')
  t.equal(await inner.getByRole('navigation', { name: 'Sections' }).count(), 1, 'its sections stay, as tabs')
  const heights = async (): Promise<{ frame: number, content: number }> => ({
    frame: await embedded.locator('iframe').evaluate((el) => el.getBoundingClientRect().height),
    content: await inner.locator('html').evaluate((el) => Math.ceil(el.getBoundingClientRect().height))
  })
  await eventually('Math.abs(h.frame - h.content) <= 1', async () => { const h = await heights(); return Math.abs(h.frame - h.content) <= 1 })
  const first = await heights()
  await inner.getByRole('link', { name: 'Event types' }).click()
  await inner.getByTestId('event-type').first().waitFor()
  await eventually('h.content !== first.content && Math.abs(h.frame - h.content) <= 1', async () => { const h = await heights(); return h.content !== first.content && Math.abs(h.frame - h.content) <= 1 })
  t.pass(`the frame follows the portal's height (${first.frame} px, then ${(await heights()).frame} px)`)
  t.equal(await inner.locator('html').evaluate((el) => el.scrollHeight > el.clientHeight + 1), false, 'so the frame has no scrollbar of its own')
  await screenshot(embedded, 'portal-embedded')
  await docsShot(embedded, 'portal-embedded')
  t.same(embedErrors, [])
  await embedded.close()

  const refused = await context.newPage()
  const refusals = consoleErrors(refused)
  await refused.goto(`${hostOrigin}/?src=${encodeURIComponent((await mint(closed)).url)}`)
  // Chromium says so in the framing page's console, and shows its error page in the frame.
  await eventually('refusals.some((e) => /frame-ancestors/.test(e)) || refused.frames().s…', async () => refusals.some((e) => /frame-ancestors/.test(e)) || refused.frames().some((f) => f.url().startsWith('chrome-error:')))
  t.equal(await refused.frameLocator('iframe').getByRole('heading').count(), 0, 'nothing of the portal shows')
  await refused.close()
  await page.close()
})
