/**
 * The package's root exports exactly the runtime names docs/api.md documents ("Runtime exports"), at most 24
 * of them, and exactly the types of its "Types" table: a name added to index.ts without its row, or a row
 * left behind by a removal, fails here. Reads the built package (dist/index.js and dist/index.d.ts, as users
 * import them): run `npm run build` first.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'

const MAX_RUNTIME_NAMES = 24

const API = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8')

function section (heading: string): string {
  const start = API.indexOf(`\n## ${heading}\n`)
  if (start === -1) throw new Error(`docs/api.md has no "## ${heading}" section`)
  const end = API.indexOf('\n## ', start + 1)
  return API.slice(start, end === -1 ? undefined : end)
}

/** The first column of the table under `## Runtime exports`, one backquoted name per row. */
function documentedNames (): string[] {
  return [...section('Runtime exports').matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1] as string)
}

/** Every backquoted name in the second column of the `## Types` table. */
function documentedTypes (): string[] {
  return section('Types').split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| area'))
    .flatMap((line) => [...(line.split(' | ')[1] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1] as string))
}

/** The names of the built declarations' `export type { … }` lists (`A as B` is B). */
function exportedTypes (): string[] {
  const declarations = readFileSync(new URL('../dist/index.d.ts', import.meta.url), 'utf8')
  return [...declarations.matchAll(/export type \{([^}]*)\}/g)]
    .flatMap((m) => (m[1] as string).split(',').map((name) => name.trim().split(/\s+as\s+/).pop() as string))
    .filter((name) => name !== '')
}

// The built entry, read at run time (npm test type-checks before it builds).
const builtEntry = new URL('../dist/index.js', import.meta.url).href

t.test('the root exports the names docs/api.md lists, no more and no fewer', async (t) => {
  const documented = documentedNames()
  const exported = Object.keys(await import(builtEntry))
  t.ok(documented.length > 0, 'the section lists names')
  t.same(new Set(documented).size, documented.length, 'no name listed twice')
  t.same(exported.filter((name) => !documented.includes(name)), [], 'every export has a row')
  t.same(documented.filter((name) => !exported.includes(name)), [], 'every row is exported')
})

t.test(`the root has at most ${MAX_RUNTIME_NAMES} runtime names`, async (t) => {
  const exported = Object.keys(await import(builtEntry))
  t.ok(exported.length <= MAX_RUNTIME_NAMES, `${exported.length} names: ${exported.join(', ')}`)
})

t.test('the root exports the types docs/api.md lists, no more and no fewer', async (t) => {
  const documented = documentedTypes()
  const exported = exportedTypes()
  t.ok(exported.length > 0, 'dist/index.d.ts exports types')
  t.same(exported.filter((name) => !documented.includes(name)), [], 'every exported type is listed')
  t.same(documented.filter((name) => !exported.includes(name)), [], 'every listed type is exported')
})
