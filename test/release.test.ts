/**
 * One version for what ships together: the package, its lockfile, the chart and the image tag it deploys
 * (appVersion) carry the CHANGELOG's newest version, so a chart that needs a newer package's settings never
 * goes out under the older number.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseDocument } from 'yaml'
import { ROOT } from './helpers/helm.js'

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')

t.test('package.json, package-lock.json, the chart\'s version and appVersion are the CHANGELOG\'s newest version', async (t) => {
  const newest = /^## (\d+\.\d+\.\d+)\b/m.exec(read('CHANGELOG.md'))?.[1]
  t.match(newest, /^\d+\.\d+\.\d+$/, 'the CHANGELOG names its newest version first')
  const pkg = JSON.parse(read('package.json')) as { version: string }
  const lock = JSON.parse(read('package-lock.json')) as { version: string, packages: Record<string, { version?: string }> }
  const chart = parseDocument(read('charts/anvil/Chart.yaml')).toJS() as { version: string, appVersion: string }
  t.same({ package: pkg.version, lock: lock.version, lockRoot: lock.packages['']?.version, chart: chart.version, appVersion: chart.appVersion },
    { package: newest, lock: newest, lockRoot: newest, chart: newest, appVersion: newest })
})

t.test('the CHANGELOG says how to upgrade to its newest version, in numbered steps', async (t) => {
  const changelog = read('CHANGELOG.md')
  const section = changelog.slice(changelog.indexOf('\n## '), changelog.indexOf('\n## ', changelog.indexOf('\n## ') + 1))
  const steps = /### Upgrading from [\d.]+\n\n([\s\S]*?)\n###/.exec(section)?.[1] ?? ''
  const numbered = steps.split('\n').filter((line) => /^\d+\. /.test(line)).map((line) => Number(line.split('.')[0]))
  t.ok(numbered.length >= 3, 'numbered steps')
  t.same(numbered, numbered.map((_, i) => i + 1), 'numbered 1, 2, 3, … in the order to follow')
})
