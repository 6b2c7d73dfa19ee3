/**
 * The console's test harness: a real `anvil serve` (admin on) and `anvil worker` (test/fixtures/console-handler.mjs,
 * outgoing webhooks to loopback allowed) on a private Redis and PostgreSQL database, a real Chromium, and the
 * helpers the console tests share. Shared by test/console/*.test.ts; the Firefox test takes the server side alone
 * (startConsoleServer) and its own browser (test/helpers/firefox.ts).
 */
import type { Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { signRequest } from '../../src/testing/sign-request.js'
import { startCli } from './cli.js'
import { consoleErrors, openBrowser, screenshot, seriousViolations } from './browser.js'
import { TestDatabase } from './pg.js'
import { TestRedis } from './redis.js'
import { eventually } from './eventually.js'

export const TOKEN = 'console-admin-token-0123456789'
/** The console server's and worker's ANVIL_ENCRYPTION_KEY (32 bytes, hex). */
export const CONSOLE_ENCRYPTION_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'
export const STRIPE_SECRET = 'whsec_console_stripe_0123456789'
export const GITHUB_SECRET = 'console-github-secret-0123456789'

/** The server side, whatever the browser. */
export interface ConsoleServer {
  base: string
  /** While this file exists, the handler fails events flagged `fail` or `dead` (test/fixtures/console-handler.mjs). */
  failSwitch: string
  /** A Stripe event, signed as Stripe signs it, POSTed to the running server (to source `stripe` unless told). */
  sendStripe: (id: string, type: string, data: object, source?: string) => Promise<void>
  sendGithub: (action: string) => Promise<void>
  /** A body signed with Anvil's own scheme (no event id, no type), to source `plain`. */
  sendPlain: (body: object) => Promise<void>
  adminGet: <T>(path: string) => Promise<T>
  adminPost: <T>(path: string, body?: object) => Promise<T>
}

export interface ConsoleHarness extends ConsoleServer {
  context: BrowserContext
  /** A new page whose last state is saved as .tap/console/<name>.png when the test ends, pass or fail. */
  newPage: (t: Test, name: string) => Promise<{ page: Page, errors: string[] }>
  /** A page logged in (the session cookie is the context's), with its console errors collected. */
  loggedIn: (t: Test, name: string) => Promise<{ page: Page, errors: string[] }>
  checkAccessible: (t: Test, page: Page, what: string) => Promise<void>
}

/** The page's errors but the API's 4xx answers, which the page shows itself (wrong token, a feature not configured). */
export const pageErrors = (errors: string[]): string[] => errors.filter((e) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(e))

/** Waits for the page's loads to end (nothing aria-busy). */
export async function settled (page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null)
}

/**
 * The server, the worker, Redis and PostgreSQL, started for `t` (the file's root test) and stopped at its end.
 * `worker: false` leaves the worker out, for a file whose pages handle no event and send no webhook.
 */
export async function startConsoleServer (t: Test, { worker: withWorker = true } = {}): Promise<ConsoleServer> {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-console-'))
  const failSwitch = join(dir, 'fail')
  writeFileSync(failSwitch, 'on')
  writeFileSync(join(dir, 'sources.yaml'), [
    'sources:',
    '  - { name: stripe, path: /webhooks/stripe, provider: stripe, secrets: ["${STRIPE_SECRET}"] }',
    '  - { name: github, path: /webhooks/github, provider: github, secrets: ["${GITHUB_SECRET}"] }',
    // Keyed by payload, not by the event id: an id sent again with other bytes is a new delivery (the journal diffs it).
    '  - { name: stripe-resent, path: /webhooks/stripe-resent, provider: stripe, secrets: ["${STRIPE_SECRET}"], idempotency: payload }',
    // Anvil's own scheme sends no event id: the journal keys such an event by a 64-hex digest of its bytes.
    '  - { name: plain, path: /webhooks/plain, provider: anvil, secrets: ["${STRIPE_SECRET}"] }', ''
  ].join('\n'))

  const [redis, db] = await Promise.all([TestRedis.start(), TestDatabase.migrated()])
  t.teardown(async () => { await redis.stop(); await db.drop(); rmSync(dir, { recursive: true, force: true }) })

  const env = {
    REDIS_URL: redis.url, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ANVIL_DATABASE_URL: db.url, ANVIL_RETRY_SCHEDULE: '600000',
    // Outgoing webhooks: tried at once and 5 s later, then failed for good (so a re-send has something to do).
    ANVIL_OUTBOUND_RETRY_SCHEDULE: '5000',
    // The same keys for the admin API and the worker: endpoints' client keys and OAuth secrets are stored encrypted.
    ANVIL_ENCRYPTION_KEY: CONSOLE_ENCRYPTION_KEY,
    ANVIL_CONFIG: join(dir, 'sources.yaml'), STRIPE_SECRET, GITHUB_SECRET, CONSOLE_FAIL_FILE: failSwitch
  }
  const server = startCli(t, ['serve'], { env: { ...env, PORT: '0', ANVIL_ADMIN_TOKEN: TOKEN } })
  // The receivers are on loopback, which the SSRF guard refuses unless allowed.
  const worker = withWorker
    ? startCli(t, ['worker', '--handler', 'test/fixtures/console-handler.mjs'], {
      env: { ...env, PORT: '0', ANVIL_OUTBOUND_ALLOW_NETS: '127.0.0.1/32' }
    })
    : undefined
  t.teardown(async () => { await server.stop(); await worker?.stop() })
  // LOG_LEVEL=warn logs no listening line: the port is read from the kernel's socket table.
  const base = `http://127.0.0.1:${await server.boundPort()}`
  await eventually('the server ready', async () => (await fetch(`${base}/health/ready`).catch(() => undefined))?.status === 200)

  async function send (source: string, signed: { headers: Record<string, string>, body: string }, what: string): Promise<void> {
    const res = await fetch(`${base}/webhooks/${source}`, { method: 'POST', headers: signed.headers, body: signed.body })
    if (res.status !== 202) throw new Error(`${what}: ${res.status} ${await res.text()}`)
  }

  async function admin<T> (method: string, path: string, body?: object): Promise<T> {
    const res = await fetch(`${base}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return await res.json() as T
  }

  return {
    base,
    failSwitch,
    sendStripe: async (id, type, data, source = 'stripe') => await send(source,
      signRequest('stripe', { body: { id, object: 'event', type, data: { object: data } }, secret: STRIPE_SECRET }), `stripe ${id}`),
    sendGithub: async (action) => await send('github',
      signRequest('github', { body: { action, zen: 'Keep it logically awesome.' }, secret: GITHUB_SECRET, eventType: 'issues' }), 'github'),
    sendPlain: async (body) => await send('plain', signRequest('anvil', { body, secret: STRIPE_SECRET }), 'plain'),
    adminGet: async <T>(path: string) => await admin<T>('GET', path),
    adminPost: async <T>(path: string, body?: object) => await admin<T>('POST', path, body ?? {})
  }
}

/** The server side (`options` as startConsoleServer's) and a real Chromium (test/helpers/browser.ts), both stopped at the end of `t`. */
export async function startConsole (t: Test, options: { worker?: boolean } = {}): Promise<ConsoleHarness> {
  const server = await startConsoleServer(t, options)
  const { base } = server
  const context = await openBrowser(t)

  async function newPage (t: Test, name: string): Promise<{ page: Page, errors: string[] }> {
    const page = await context.newPage()
    const errors = consoleErrors(page)
    t.teardown(async () => {
      await screenshot(page, name)
      await page.close()
    })
    return { page, errors }
  }

  return {
    ...server,
    context,
    newPage,
    async loggedIn (t, name) {
      const { page, errors } = await newPage(t, name)
      await page.goto(`${base}/admin/console/`)
      const tokenField = page.getByLabel('Admin token')
      const sections = page.getByRole('navigation', { name: 'Sections' })
      // The page asks the server for its session before it shows either: wait for one, not for the load event.
      await tokenField.or(sections).first().waitFor()
      if (await tokenField.isVisible()) {
        await tokenField.fill(TOKEN)
        await page.getByRole('button', { name: 'Log in' }).click()
      }
      await sections.waitFor()
      return { page, errors }
    },
    async checkAccessible (t, page, what) {
      t.same(await seriousViolations(page), [], `${what}: no serious axe-core violation`)
    }
  }
}
