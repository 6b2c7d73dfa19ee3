/**
 * The package's root exports exactly the runtime names docs/api.md documents ("Runtime exports"), at most 24
 * of them, and exactly the types of its "Types" table; each subpath (`/replay`, `/testing`) exactly the names
 * and types of its row under "Entry points": a name added to an entry without its row, or a row left behind by
 * a removal, fails here. Reads the built package (its entries in dist/, found through package.json's
 * `exports`, as users import them): run `npm run build` first.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { ROOT_URL } from './helpers/root.js'

const PACKAGE = JSON.parse(readFileSync(new URL('package.json', ROOT_URL), 'utf8')) as { name: string, exports: Record<string, { types: string, default: string }> }

const MAX_RUNTIME_NAMES = 24

const API = readFileSync(new URL('docs/api.md', ROOT_URL), 'utf8')

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
function exportedTypes (declarationFile = 'dist/index.d.ts'): string[] {
  const declarations = readFileSync(new URL(declarationFile, ROOT_URL), 'utf8')
  return [...declarations.matchAll(/export type \{([^}]*)\}/g)]
    .flatMap((m) => (m[1] as string).split(',').map((name) => name.trim().split(/\s+as\s+/).pop() as string))
    .filter((name) => name !== '')
}

// The built entry, read at run time (npm test type-checks before it builds).
const builtEntry = new URL('dist/index.js', ROOT_URL).href

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

/** The `Entry points` row of a subpath: the backquoted names before its colon, and the types of its last column. */
function entryRow (subpath: string): { names: string[], types: string[] } {
  const row = section('Entry points').split('\n').find((line) => line.startsWith(`| \`${PACKAGE.name}${subpath.slice(1)}\` |`))
  if (row === undefined) throw new Error(`docs/api.md has no Entry points row for ${subpath}`)
  const [, holds = '', types = ''] = row.split(' | ')
  const backquoted = (text: string): string[] => [...text.matchAll(/`(\w+)`/g)].map((m) => m[1] as string)
  return { names: backquoted(holds.split(':')[0] ?? ''), types: backquoted(types) }
}

const SUBPATHS = Object.keys(PACKAGE.exports).filter((subpath) => subpath !== '.')

t.test('package.json has the subpaths docs/api.md lists', async (t) => {
  t.same(SUBPATHS, ['./replay', './testing'])
})

for (const subpath of SUBPATHS) {
  t.test(`${subpath} exports the names and types of its docs/api.md row, no more and no fewer`, async (t) => {
    const entry = PACKAGE.exports[subpath] as { types: string, default: string }
    const { names, types } = entryRow(subpath)
    t.ok(names.length > 0 && types.length > 0, 'the row lists names and types')
    const exported = Object.keys(await import(new URL(entry.default, ROOT_URL).href))
    t.same(exported.filter((name) => !names.includes(name)), [], 'every runtime export is in the row')
    t.same(names.filter((name) => !exported.includes(name)), [], 'every name of the row is exported')
    const declared = exportedTypes(entry.types)
    t.same(declared.filter((name) => !types.includes(name)), [], 'every exported type is in the row')
    t.same(types.filter((name) => !declared.includes(name)), [], 'every type of the row is exported')
  })
}
