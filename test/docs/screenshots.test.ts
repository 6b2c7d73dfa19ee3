/**
 * The docs' pictures (issue 36, contract 7): every picture the docs show exists, none lies unused in docs/images,
 * every route of the console and the portal is a page the visual tests check and photograph (test/helpers/visual.ts),
 * each page's picture is shown in its app's doc, and `npm run screenshots` (scripts/screenshots.mjs) runs every
 * test that takes one. Reads files only: no browser.
 */
import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../helpers/root.js'
import { CONSOLE_PAGES, OTHER_SHOTS, PORTAL_PAGES, type AppPage } from '../helpers/visual.js'

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
/** Each doc's pictures under docs/images, by file name. */
const shown = new Map(DOCS.map((doc) => [doc, [...read(doc).matchAll(/!\[[^\]]*\]\((?:docs\/)?images\/([^)\s]+)\)/g)].map((m) => m[1] as string)]))

t.test('every picture the docs show is in docs/images, and every picture there is shown', async (t) => {
  for (const [doc, images] of shown) for (const image of images) t.ok(existsSync(join(ROOT, 'docs', 'images', image)), `${doc}: images/${image} exists`)
  const used = new Set([...shown.values()].flat())
  t.same(readdirSync(join(ROOT, 'docs', 'images')).filter((name) => !used.has(name)), [], 'no picture unused')
  const taken = new Set([...CONSOLE_PAGES, ...PORTAL_PAGES].map((p) => `${p.name}.png`).concat(Object.keys(OTHER_SHOTS).map((name) => `${name}.png`)))
  t.same([...used].filter((name) => !taken.has(name)), [], 'each one taken by npm run screenshots')
})

/** An app's routes as its Page function reads them: `case '/x'`, `/^\/x\/(.+)$/` (as `/x/:`) and the default, `/`. */
function routesOf (source: string): string[] {
  const page = source.slice(source.indexOf('function Page'), source.indexOf('\n}\n', source.indexOf('function Page')))
  const cases = [...page.matchAll(/case '([^']+)'/g)].map((m) => m[1] as string)
  const params = [...page.matchAll(/\/\^\\\/([\w-]+)\\\/\(\.\+\)\$\//g)].map((m) => `/${m[1] as string}/:`)
  return ['/', ...cases, ...params].sort()
}
const routeShape = (page: AppPage): string => page.route.replace(/^#/, '').replace(/:\w+/, ':')

for (const [app, source, doc, pages] of [
  ['console', 'console/src/main.tsx', 'docs/console.md', CONSOLE_PAGES],
  ['portal', 'console/src/portal/main.tsx', 'docs/portal.md', PORTAL_PAGES]
] as const) {
  t.test(`the ${app}: every route is a page the visual test checks, each page's picture in ${doc}`, async (t) => {
    const routes = routesOf(read(source))
    t.ok(routes.length > 3, `${source}'s routes read: ${routes.join(' ')}`)
    t.same(routes.filter((route) => !pages.some((p) => p.entry !== true && routeShape(p) === route)), [], 'every route has its page')
    for (const page of pages) t.ok(shown.get(doc)?.includes(`${page.name}.png`), `${doc} shows images/${page.name}.png`)
  })
}

t.test('npm run screenshots runs every test that takes a picture', async (t) => {
  t.equal(JSON.parse(read('package.json')).scripts.screenshots, 'node scripts/screenshots.mjs')
  const script = read('scripts/screenshots.mjs')
  const files = ['test/console/visual.test.ts', 'test/portal/visual.test.ts', ...Object.values(OTHER_SHOTS)]
  for (const file of files) t.ok(script.includes(`'${file}'`), `it runs ${file}`)
  for (const [name, file] of Object.entries(OTHER_SHOTS)) t.ok(read(file).includes(`docsShot(`) && read(file).includes(`'${name}'`), `${file} takes ${name}`)
  for (const file of files.slice(0, 2)) t.match(read(file), /docsShot\(page, (shown|entry)\.name\)|checkPages\(t, page, /, `${file} takes each of its pages`)
})
