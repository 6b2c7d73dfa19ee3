/**
 * The optional peers, as a user meets them: a consumer is compiled (tsc, skipLibCheck off) against the built
 * declarations copied into a temporary project whose node_modules holds only the package's production install.
 * Without any of the type packages (stripe, @octokit/openapi-webhooks-types, @slack/types, discord-api-types,
 * @paddle/paddle-node-sdk, @linear/sdk, square, @gitbeaker/core, @zoom/rivet) it compiles, names are still checked, and
 * payloads are JSON. With them installed, test/types/router.ts (`npm run test:types`) checks the packages'
 * types through the same built declarations. Needs `npm run build` first (dist/).
 */
import t from 'tap'
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT as root, consumerProject } from '../helpers/consumer.js'

// One whole-program compile (about 10 s of CPU); a shared, busy machine may stretch it.
t.setTimeout(180_000)
// The package's production dependencies, as npm would install them (never the optional peers), and Node's types.
const consumer = consumerProject('anvil-peer-types-')
t.teardown(consumer.cleanup)
const { dir, tsc } = consumer

// The package as installed: its package.json and its declarations (copied, not linked: a link would let
// the compiler resolve `stripe` from this repository's node_modules).
const pkg = join(dir, 'node_modules/@anvil/fastify')
mkdirSync(pkg, { recursive: true })
writeFileSync(join(pkg, 'package.json'), readFileSync(join(root, 'package.json')))
cpSync(join(root, 'dist'), join(pkg, 'dist'), { recursive: true, filter: (src) => !/\.(js|map)$/.test(src) })

const checks = `
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
const expectType = <T extends true>(_value?: T): void => {}
const router = createRouter()
// @ts-expect-error -- a misspelled name is an error with or without the packages
router.on('stripe:invoice.payed', () => {})
// @ts-expect-error -- and for GitHub
router.on('github:pull_request.opend', () => {})
`

t.test('without any type package: compiles, names checked, payloads are JSON', async (t) => {
  writeFileSync(join(dir, 'without.ts'), `import { createRouter, type FormFields, type JsonObject, type WebhookPayload } from '@anvil/fastify'
${checks}
router.on('stripe:invoice.paid', (event) => { expectType<Equal<typeof event.data, JsonObject>>() })
router.on('github:pull_request.opened', (event) => { expectType<Equal<typeof event.data, JsonObject>>() })
router.on(['slack:app_mention', 'discord:APPLICATION_COMMAND', 'paddle:transaction.completed', 'linear:Issue.create', 'square:payment.updated', 'gitlab:Push Hook', 'zoom:meeting.started'], (event) => {
  expectType<Equal<typeof event.data, JsonObject>>()
})
router.on('slack:slash_command', (event) => { expectType<Equal<typeof event.data, FormFields>>() })
expectType<Equal<WebhookPayload<'stripe:*'>, JsonObject>>()
// @ts-expect-error -- names are still checked for the providers typed by a package
router.on('paddle:transaction.complete', () => {})
// The one line that must fail, so the check is shown to be able to: JSON is not a string.
router.on('stripe:charge.succeeded', (event) => { expectType<Equal<typeof event.data, string>>() })
`)
  const result = await tsc('without.ts')
  t.equal(result.output.trim(), 'without.ts(21,62): error TS2344: Type \'false\' does not satisfy the constraint \'true\'.', 'only the line meant to fail fails')
})

t.test('with the packages installed (devDependencies): every import of peer-types.d.ts resolves, none silently `any`', async (t) => {
  // skipLibCheck never checks a .d.ts, so the file is checked as a .ts, without its @ts-ignore lines, from a
  // folder that resolves this repository's node_modules: a renamed or missing export is an error here.
  const here = join(root, 'node_modules/.cache/anvil-peer-imports')
  mkdirSync(here, { recursive: true })
  t.teardown(() => rmSync(here, { recursive: true, force: true }))
  const source = readFileSync(join(root, 'src/handlers/peer-types.d.ts'), 'utf8')
  const stripped = source.split('\n').filter((line) => !line.startsWith('// @ts-ignore')).join('\n')
  t.not(stripped, source, 'the ignores were there to strip')
  writeFileSync(join(here, 'peer-types.ts'), stripped)
  const result = await tsc('peer-types.ts', true, here)
  t.equal(result.code, 0, result.output)
})
