/**
 * docs/errors.md is the reference of the error registry (src/shared/errors.ts): every code has a section
 * (`### ANVIL_ERR_…`) and a row in the summary table with its HTTP status, and neither names a code the
 * registry does not have.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { errors } from '../../src/shared/errors.js'
import { ROOT_URL } from '../helpers/root.js'

const doc = readFileSync(new URL('docs/errors.md', ROOT_URL), 'utf8')
const registry = new Map<string, number | undefined>(Object.values(errors).map((AnvilError) => {
  const err = new AnvilError('x', 'x', 'x')
  return [err.code, err.statusCode] as const
}))

t.test('every code of the registry has a section, and every section is a code of the registry', async (t) => {
  const sections = [...doc.matchAll(/^### (ANVIL_ERR_\w+)$/gm)].map((m) => m[1] as string)
  t.same(new Set(sections).size, sections.length, 'no code has two sections')
  t.same([...registry.keys()].filter((code) => !sections.includes(code)), [], 'no code without a section')
  t.same(sections.filter((code) => !registry.has(code)), [], 'no section for a code that does not exist')
})

t.test('the summary table gives each code the status of the registry', async (t) => {
  const rows = new Map([...doc.matchAll(/^\| \[`(ANVIL_ERR_\w+)`\]\(#[a-z_]+\) \| (\d{3}) \|/gm)]
    .map((m) => [m[1] as string, Number(m[2])] as const))
  t.same(Object.fromEntries(rows), Object.fromEntries(registry))
})

t.test('every code the docs mention anywhere exists', async (t) => {
  const files = ['README.md', 'CHANGELOG.md', ...readdirSync(new URL('docs/', ROOT_URL)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  for (const file of files) {
    const text = readFileSync(new URL(file, ROOT_URL), 'utf8')
    const unknown = [...new Set([...text.matchAll(/ANVIL_ERR_[A-Z_]+[A-Z]/g)].map((m) => m[0]))].filter((code) => !registry.has(code))
    t.same(unknown, [], file)
  }
})
