/**
 * The package's root exports exactly the runtime names docs/api.md documents ("Runtime exports"), and at most
 * 24 of them: a name added to index.ts without its row, or a row left behind by a removal, fails here. Reads
 * the built package (dist/index.js, as users import it): run `npm run build` first.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'

const MAX_RUNTIME_NAMES = 24

/** The first column of the table under `## Runtime exports`, one backquoted name per row. */
function documentedNames (): string[] {
  const doc = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8')
  const start = doc.indexOf('\n## Runtime exports\n')
  if (start === -1) throw new Error('docs/api.md has no "## Runtime exports" section')
  const end = doc.indexOf('\n## ', start + 1)
  const section = doc.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1] as string)
}

t.test('the root exports the names docs/api.md lists, no more and no fewer', async (t) => {
  const documented = documentedNames()
  const exported = Object.keys(await import('../dist/index.js'))
  t.ok(documented.length > 0, 'the section lists names')
  t.same(new Set(documented).size, documented.length, 'no name listed twice')
  t.same(exported.filter((name) => !documented.includes(name)), [], 'every export has a row')
  t.same(documented.filter((name) => !exported.includes(name)), [], 'every row is exported')
})

t.test(`the root has at most ${MAX_RUNTIME_NAMES} runtime names`, async (t) => {
  const exported = Object.keys(await import('../dist/index.js'))
  t.ok(exported.length <= MAX_RUNTIME_NAMES, `${exported.length} names: ${exported.join(', ')}`)
})
