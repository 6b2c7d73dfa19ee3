/**
 * Every runtime dependency, as installed, runs on every Node version the package says it runs on: each
 * `engines.node` of the production tree (`npm ls --omit=dev --long`, read from node_modules, no network) holds
 * the whole of package.json's range, and the README names that same floor. `cookie@2` (Node >= 22) under
 * `@fastify/cookie` and fastify's `light-my-request` once made `npm install` warn EBADENGINE on Node 20.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import semver from 'semver'
import { ROOT } from '../helpers/root.js'

interface Installed { version?: string, engines?: { node?: string }, dependencies?: Record<string, Installed> }

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
const ours = manifest.engines.node

t.test('each production dependency\'s engines.node holds every Node that package.json\'s engines names', async (t) => {
  const { stdout } = await promisify(execFile)('npm', ['ls', '--omit=dev', '--all', '--long', '--json'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 })
  const narrower: string[] = []
  let seen = 0
  const walk = (deps: Record<string, Installed> = {}): void => {
    for (const [name, dep] of Object.entries(deps)) {
      seen++
      const theirs = dep.engines?.node
      if (theirs !== undefined && !semver.subset(ours, theirs)) narrower.push(`${name}@${String(dep.version)} needs node ${theirs}`)
      walk(dep.dependencies)
    }
  }
  walk((JSON.parse(stdout) as Installed).dependencies)
  t.ok(seen > 50, `the tree was read (${seen} packages)`)
  t.same(narrower, [], `all run on node ${ours}`)
})

t.test('the README names the range package.json gives', async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  t.match(readme, `Node \`${ours}\``)
  t.notMatch(readme, /Node 20 or later/, 'not a bare major whose early releases some dependencies refuse')
})
