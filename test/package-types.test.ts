/**
 * The published types, as a user installs them: `npm pack` makes the tarball, which is unpacked into a fresh
 * app's node_modules beside the package's production dependencies only (test/helpers/consumer.ts), and the
 * app is compiled with `skipLibCheck: false`. Every type the declarations import must come with the package,
 * and `event.db` and `publish`'s `client` must be pg's types, not `any`; apps of `/testing` and `/replay` compile
 * too; a catalog registered in `AnvilTypes` by module augmentation types `app.anvil.publish`; the README's
 * existing-service snippet compiles as pasted into a file of its own.
 *
 * The optional peers, as a user meets them: without any of the type packages (stripe,
 * @octokit/openapi-webhooks-types, @slack/types, discord-api-types, @paddle/paddle-node-sdk, @linear/sdk, square,
 * @gitbeaker/core, @zoom/rivet) the app compiles, names are still checked, and payloads are JSON. With them
 * installed, test/types/router.ts (`npm run test:types`) checks the packages' types through the same built
 * declarations. Needs `npm run build` first (dist/).
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT, consumerProject } from './helpers/consumer.js'
import { beforeAll, beforeStep } from './helpers/before-all.js'

const run = promisify(execFile)
// Whole-program compiles (about 25 s of CPU in all); a shared, busy machine may stretch them.
t.setTimeout(240_000)

const app = consumerProject('anvil-package-types-')
t.teardown(app.cleanup)
const packDir = mkdtempSync(join(tmpdir(), 'anvil-pack-'))
t.teardown(() => rmSync(packDir, { recursive: true, force: true }))

beforeStep(t, async () => {
  const { stdout } = await run('npm', ['pack', '--pack-destination', packDir, '--ignore-scripts', '--silent'], { cwd: ROOT })
  const tarball = join(packDir, stdout.trim().split('\n').pop() as string)
  const installed = join(app.dir, 'node_modules/@anvil/fastify')
  mkdirSync(installed, { recursive: true })
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
})

// The app, and one of the other two entries (/testing, /replay).
writeFileSync(join(app.dir, 'app.ts'), `import Fastify from 'fastify'
import pg from 'pg'
import { anvilOutbound, createWorker } from '@anvil/fastify'

const server = Fastify()
await server.register(anvilOutbound, { database: 'postgres://127.0.0.1/app' })
const pool = new pg.Pool()
const client = await pool.connect()
await server.anvil.publish({ type: 'order.paid', data: { id: 1 } }, { client })
// @ts-expect-error -- publish's client is pg's, not any
await server.anvil.publish({ type: 'order.paid', data: { id: 1 } }, { client: 42 })

createWorker(async (event) => {
  const result = await event.db?.query<{ n: number }>('SELECT 1 AS n')
  const n: number | undefined = result?.rows[0]?.n
  // @ts-expect-error -- event.db is pg's client, not any: a row is what the query says
  const s: string | undefined = result?.rows[0]?.n
  void n; void s
}, { redis: 'redis://127.0.0.1:6379', journal: { database: 'postgres://127.0.0.1/app' } })
`)
writeFileSync(join(app.dir, 'kit.ts'), `import Fastify from 'fastify'
import { createReplayer, replayDeadLetter } from '@anvil/fastify/replay'
import { fixture, fixtureNames, injectWebhook, signRequest } from '@anvil/fastify/testing'

const sample = fixture('github', 'pull_request.opened')
const signed = signRequest('github', { body: sample.body as object, secret: 'gh-secret-0123456789', eventType: sample.eventType })
const headers: Record<string, string> = signed.headers
const names: string[] = fixtureNames('stripe')
const res = await injectWebhook(Fastify(), { provider: 'stripe', fixture: 'invoice.paid', secret: 'whsec_test' })
const status: number = res.statusCode
// @ts-expect-error -- a typo'd sample name is an error, so the kit's types are not any
fixture('stripe', 'invoice.payed')
const replayer = createReplayer({ redis: 'redis://127.0.0.1:6379' })
const one = await replayDeadLetter('dl_1', { redis: 'redis://127.0.0.1:6379' })
void headers; void names; void status; void replayer; void one
`)
// An app of the router with none of the optional peers installed (the consumer has the production install only).
writeFileSync(join(app.dir, 'without.ts'), `import { createRouter, type FormFields, type JsonObject, type WebhookPayload } from '@anvil/fastify'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
const expectType = <T extends true>(_value?: T): void => {}
const router = createRouter()
// @ts-expect-error -- a misspelled name is an error with or without the packages
router.on('stripe:invoice.payed', () => {})
// @ts-expect-error -- and for GitHub
router.on('github:pull_request.opend', () => {})
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
// The README's existing-service block, pasted as it stands.
const snippet = /```ts\n(import Fastify[\s\S]*?)```/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))?.[1] ?? ''
writeFileSync(join(app.dir, 'service.ts'), snippet)

// One program for the four: each declaration file (the package's, node's, fastify's, pg's) is checked once with
// skipLibCheck off, not once per app. Each test below reads the errors of its own file.
const off = beforeAll(t, async () => ({ errors: app.compile(['app.ts', 'kit.ts', 'without.ts', 'service.ts']) }))
const errorsOf = (file: string): string[] => off.errors.filter((line) => line.startsWith(`${file}(`))

t.test('an app using event.db and publish({ client }), /testing and /replay compiles against the tarball with skipLibCheck off, and neither is any', async (t) => {
  const others = off.errors.filter((line) => !line.startsWith('without.ts(') && !line.startsWith('service.ts('))
  t.same(others, [], 'no error in app.ts or kit.ts, none from inside dist/ (TS7016: a declaration without its types)')
})

t.test('with skipLibCheck on, event.db and publish\'s client are still not any', async (t) => {
  // skipLibCheck hides a declaration's missing import: what it named became any, and the @ts-expect-error lines would fail.
  t.same(app.compile(['app.ts'], true), [], 'the @ts-expect-error lines still hold')
})

t.test('a catalog registered in AnvilTypes types app.anvil.publish as installed: a wrong field or type is a compile error', async (t) => {
  writeFileSync(join(app.dir, 'catalog.ts'), `import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import { anvilOutbound, defineEventTypes } from '@anvil/fastify'

const eventTypes = defineEventTypes({ 'invoice.paid': Type.Object({ amount: Type.Integer(), currency: Type.String() }) })
declare module '@anvil/fastify' {
  interface AnvilTypes { eventTypes: typeof eventTypes }
}

const server = Fastify()
await server.register(anvilOutbound, { database: 'postgres://127.0.0.1/app', eventTypes })
await server.anvil.publish({ type: 'invoice.paid', data: { amount: 1, currency: 'eur' } })
// @ts-expect-error -- amount is a number
await server.anvil.publish({ type: 'invoice.paid', data: { amount: '1', currency: 'eur' } })
// @ts-expect-error -- a type the catalog does not hold
await server.anvil.publish({ type: 'invoice.voided', data: { amount: 1, currency: 'eur' } })
`)
  // A program of its own: the augmentation types every publish of its program (app.ts's untyped one too), and
  // the declarations are checked again with it in place (skipLibCheck off).
  t.same(app.compile(['catalog.ts']), [], 'no error: each @ts-expect-error met one, none inside dist/ with the augmentation')
})

t.test('without any type package: compiles, names checked, payloads are JSON', async (t) => {
  t.same(errorsOf('without.ts'), ['without.ts(20,62): error TS2344: Type \'false\' does not satisfy the constraint \'true\'.'], 'only the line meant to fail fails')
})

t.test('with the packages installed (devDependencies): every import of peer-types.d.ts resolves, none silently `any`', async (t) => {
  // skipLibCheck never checks a .d.ts, so the file is checked as a .ts, without its @ts-ignore lines, from a
  // folder that resolves this repository's node_modules: a renamed or missing export is an error here.
  const here = join(ROOT, 'node_modules/.cache/anvil-peer-imports')
  mkdirSync(here, { recursive: true })
  t.teardown(() => rmSync(here, { recursive: true, force: true }))
  const source = readFileSync(join(ROOT, 'src/handlers/peer-types.d.ts'), 'utf8')
  const stripped = source.split('\n').filter((line) => !line.startsWith('// @ts-ignore')).join('\n')
  t.not(stripped, source, 'the ignores were there to strip')
  writeFileSync(join(here, 'peer-types.ts'), stripped)
  t.same(app.compile(['peer-types.ts'], true, here), [])
})

t.test('the README\'s existing-service snippet compiles when pasted into a file of its own, against the tarball', async (t) => {
  // As a user's app: the repository's stricter options check the same code as examples/existing-service.ts
  // (npm run typecheck), and test/docs/example-existing-service.test.ts holds the README to that file.
  t.ok(snippet.includes('export async function buildService'), 'the README block was found')
  t.same(errorsOf('service.ts'), [])
})
