/**
 * A real Firefox for the console's tests: Debian's stock /usr/bin/firefox-esr (`.ci/run` installs it), driven over
 * WebDriver BiDi by puppeteer-core (playwright-core only drives Playwright's own patched Firefox, a download).
 * Headless, a fresh profile each time, and prefs that keep the browser off the network but for the page under test.
 */
import type { Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page, PuppeteerNode } from 'puppeteer-core'
import { screenshotPath } from './browser.js'

// Its CommonJS build: tap's TypeScript loader resolves a package-exports pattern of chromium-bidi (imported by the
// ESM build's BiDi code) to a wrong file name, where Node's own require resolves it right.
const puppeteer = createRequire(import.meta.url)('puppeteer-core') as PuppeteerNode

export const FIREFOX = process.env.ANVIL_TEST_FIREFOX ?? '/usr/bin/firefox-esr'
/** A closed loopback port: whatever still calls home fails at once instead of waiting on DNS. */
const NOWHERE = 'http://127.0.0.1:1/'

/** On top of puppeteer-core's own test prefs: no update, telemetry, captive portal, remote settings or prefetch. */
export const FIREFOX_PREFS: Record<string, unknown> = {
  'app.update.auto': false,
  'app.update.service.enabled': false,
  'app.shield.optoutstudies.enabled': false,
  'browser.region.update.enabled': false,
  'browser.region.network.url': '',
  'browser.safebrowsing.update.enabled': false,
  'browser.topsites.contile.enabled': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'extensions.blocklist.enabled': false,
  'extensions.systemAddon.update.enabled': false,
  'geo.provider.network.url': '',
  'media.gmp-manager.updateEnabled': false,
  'messaging-system.rsexperimentloader.enabled': false,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'network.dns.disablePrefetch': true,
  'network.predictor.enabled': false,
  'network.prefetch-next': false,
  'network.trr.mode': 5,
  'services.settings.server': NOWHERE,
  'toolkit.telemetry.enabled': false,
  'toolkit.telemetry.server': NOWHERE,
  'toolkit.telemetry.unified': false
}

/** A headless Firefox on a fresh profile, closed (and the profile removed) at the end of `t`. */
export async function openFirefox (t: Test): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'anvil-firefox-'))
  const browser = await puppeteer.launch({
    browser: 'firefox',
    protocol: 'webDriverBiDi',
    executablePath: FIREFOX,
    headless: true,
    userDataDir: profile,
    extraPrefsFirefox: FIREFOX_PREFS,
    defaultViewport: { width: 1280, height: 800 }
  })
  t.teardown(async () => {
    await browser.close()
    rmSync(profile, { recursive: true, force: true })
  })
  return browser
}

/** A new page whose errors are collected and whose last state is saved as .tap/console/<name>.png when `t` ends. */
export async function newFirefoxPage (t: Test, browser: Browser, name: string): Promise<{ page: Page, errors: string[] }> {
  const page = await browser.newPage()
  const errors: string[] = []
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
  page.on('pageerror', (error) => errors.push(error instanceof Error ? error.message : String(error)))
  t.teardown(async () => {
    await page.screenshot({ path: screenshotPath(name), fullPage: true })
    await page.close()
  })
  return { page, errors }
}
