/**
 * docs/handlers.md's example of signing `fixture(...).body`, as written on the page, against a real listening
 * Anvil with a GitHub source: the signed sample is accepted (202) and is a job of the fixture's event type; and
 * the page's counts of Stripe and GitHub samples (`fixture`, `anvil send --event`) are the kit's.
 */
import t from 'tap'
import Fastify from 'fastify'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import anvil from '../../plugins/ingress.js'
import { fixtureNames } from '../../src/testing/fixture.js'
import { ROOT } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'
import { beforeAll } from '../helpers/before-all.js'

const SECRET = 'gh-fixture-docs-secret-0123'
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

t.test('the page\'s fixture example signs fixture(...).body and Anvil accepts it as that event', async (t) => {
  const page = readFileSync(join(ROOT, 'docs/handlers.md'), 'utf8')
  const example = /returns `\{ provider, name, eventType\?, body \}`[\s\S]*?```ts\n([\s\S]*?)```/.exec(page)?.[1]
  t.ok(example, 'the example follows what fixture() returns')
  const app = Fastify()
  await app.register(anvil, { redis: redis.url, queueName: 'fixture-docs', sources: [{ path: '/webhooks/github', provider: 'github', secrets: [SECRET] }] })
  t.teardown(async () => await app.close())
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  // Written beside the compiled kit so it imports it as a project imports the package; the page's lines unchanged
  // but the port. Test processes load no TypeScript loader, so the example is transpiled as tsc would emit it.
  const dir = mkdtempSync(join(ROOT, 'build', '.fixture-docs-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'example.mjs')
  const code = (example ?? '').replace(/^ {2}/gm, '').replace('http://127.0.0.1:3000', address)
  const source = `import { fixture, signRequest } from '../testing/index.js'\nconst secret = ${JSON.stringify(SECRET)}\n${code}\nexport const answer = { status: res.status, json: await res.json(), eventType: sample.eventType }\n`
  writeFileSync(file, ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText)
  const { answer } = await import(pathToFileURL(file).href) as { answer: { status: number, json: { jobId: string }, eventType: string } }
  t.match(answer, { status: 202, json: { jobId: String, replayed: false }, eventType: 'pull_request' })
})

t.test('the page counts the Stripe and GitHub samples as the kit has them, where it describes fixture() and anvil send', async (t) => {
  const page = readFileSync(join(ROOT, 'docs/handlers.md'), 'utf8').replace(/\s+/g, ' ')
  const [stripe, github] = [fixtureNames('stripe').length, fixtureNames('github').length]
  t.ok(stripe >= 20 && github >= 20, `at least 20 each (stripe ${stripe}, github ${github})`)
  t.match(page, `Stripe has ${stripe} samples`, 'fixture()')
  t.match(page, `and GitHub ${github} (`, 'fixture()')
  t.match(page, `(\`--event\`: ${stripe} Stripe types, ${github} GitHub ones`, 'anvil send')
})
