/**
 * A real Chromium for the console's tests: Debian's /usr/bin/chromium (`.ci/run` installs it), driven by
 * playwright-core, headless, with a fresh profile each time. Screenshots go under .tap/console/, the tests'
 * output folder; axe-core (its script from npm, evaluated in the page once per document: no extra page or frame
 * per check) finds the accessibility violations of a page.
 */
import type { Test } from 'tap'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { ROOT } from './cli.js'

export const CHROMIUM = process.env.ANVIL_TEST_CHROMIUM ?? '/usr/bin/chromium'
export const CHROMIUM_FLAGS = [
  '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'
]
export const SCREENSHOT_DIR = join(ROOT, '.tap', 'console')

/** A browser with a fresh --user-data-dir, closed (and its profile removed) at the test's end. */
export async function openBrowser (t: Test): Promise<BrowserContext> {
  return (await openBrowserWithProfile(t)).context
}

/** `openBrowser`, and the --user-data-dir it runs in (whose `Default/History` is Chromium's history database). */
export async function openBrowserWithProfile (t: Test): Promise<{ context: BrowserContext, profile: string }> {
  const profile = mkdtempSync(join(tmpdir(), 'anvil-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1280, height: 800 }
  })
  t.teardown(async () => {
    await context.close()
    rmSync(profile, { recursive: true, force: true })
  })
  return { context, profile }
}

/** Where a page's last state goes: .tap/console/<name>.png (the folder made if missing), whatever the browser. */
export function screenshotPath (name: string): `${string}.png` {
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  return `${join(SCREENSHOT_DIR, name.replace(/[^a-z0-9-]+/gi, '-').toLowerCase())}.png`
}

/** The page's last state, as a PNG under .tap/console/<name>.png. */
export async function screenshot (page: Page, name: string): Promise<string> {
  const path = screenshotPath(name)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** axe-core's own script, read once. */
let axeSource: string | undefined
const axeScript = (): string => (axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'))

/**
 * axe-core's serious and critical violations on the page, as "rule: target" lines. The script is evaluated in the
 * page (page.evaluate, which the console's strict CSP does not govern), once per document: a hash route reuses it.
 */
export async function seriousViolations (page: Page): Promise<string[]> {
  if (!await page.evaluate(() => 'axe' in window)) await page.evaluate(axeScript())
  return await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Array<{ id: string, impact?: string | null, nodes: Array<{ target: unknown[] }> }> }> } }).axe
    const result = await axe.run(document, { resultTypes: ['violations'] })
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .flatMap((v) => v.nodes.map((node) => `${v.id}: ${node.target.map(String).join(' ')}`))
  })
}

/** Every message the page logged as an error (a CSP refusal among them). */
export function consoleErrors (page: Page): string[] {
  const errors: string[] = []
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
  page.on('pageerror', (error) => errors.push(error.message))
  return errors
}

/**
 * Text broken inside a word: an element whose style lets words break anywhere, or a word whose boxes lie on more
 * than one line. Raw values (`pre`, `.raw`: payloads, headers, keys) are the only text allowed to break anywhere.
 */
export async function midWordBreaks (page: Page): Promise<string[]> {
  return await page.evaluate(() => {
    const found: string[] = []
    const raw = (element: Element | null): boolean => element?.closest('pre, .raw') != null
    for (const element of document.body.querySelectorAll('*')) {
      if (raw(element)) continue
      const { overflowWrap, wordBreak } = getComputedStyle(element)
      if (overflowWrap === 'anywhere' || wordBreak === 'break-all' || wordBreak === 'break-word') {
        found.push(`<${element.tagName.toLowerCase()} class="${element.getAttribute('class') ?? ''}"> may break words (${overflowWrap}, ${wordBreak})`)
      }
    }
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
    const range = document.createRange()
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      if (raw(node.parentElement)) continue
      for (const word of (node.textContent ?? '').matchAll(/\S+/g)) {
        range.setStart(node, word.index)
        range.setEnd(node, word.index + word[0].length)
        const lines = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0 && r.height > 0).map((r) => Math.round(r.bottom)))
        if (lines.size > 1) found.push(`"${word[0]}" is split over ${lines.size} lines`)
      }
    }
    return found
  })
}
