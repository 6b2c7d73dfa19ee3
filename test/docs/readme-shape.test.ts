/**
 * The README is a reference (CONTRIBUTING.md, Docs): at most 600 lines, no commit hashes in its prose,
 * since figures and their history, with their commits, live in bench/README.md, and each plugin's options table
 * names every option its schema takes.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import type { TObject } from '@sinclair/typebox'
import { AnvilOutboundOptionsSchema } from '../../plugins/outbound.js'
import { AdminOptionsSchema } from '../../plugins/admin/admin.js'
import { ROOT_URL } from '../helpers/root.js'

const MAX_LINES = 600
const readme = readFileSync(new URL('README.md', ROOT_URL), 'utf8')

t.test(`the README has at most ${MAX_LINES} lines`, async (t) => {
  const lines = readme.trimEnd().split('\n').length
  t.ok(lines <= MAX_LINES, `${lines} lines`)
})

t.test('the README names no commit outside its code blocks', async (t) => {
  let fenced = false
  const prose = readme.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced
    return !fenced && !line.startsWith('```')
  }).join('\n')
  // A short or full hash: 7 to 40 hex digits with at least one letter and one digit, standing alone.
  const hashes = [...prose.matchAll(/(?<![\w-])[0-9a-f]{7,40}(?![\w-])/g)].map((m) => m[0])
    .filter((word) => /[a-f]/.test(word) && /\d/.test(word))
  t.same(hashes, [])
})

t.test('each plugin\'s options table names every option of its schema, and none it lacks', async (t) => {
  const tables: Array<[string, TObject]> = [['anvilOutbound', AnvilOutboundOptionsSchema], ['anvilAdmin', AdminOptionsSchema]]
  for (const [plugin, schema] of tables) {
    const section = readme.split(`### \`${plugin}\``)[1]?.split('\n### ')[0] ?? ''
    // A row's first cell names one option or several: | `schema`, `prefix`, `queueName` | … |
    const named = section.split('\n').filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1] as string))
    t.same(named.slice().sort(), Object.keys(schema.properties).sort(), plugin)
  }
})
