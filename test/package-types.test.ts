/**
 * The published types, as a user installs them: `npm pack` makes the tarball, which is unpacked into a fresh
 * app's node_modules beside the package's production dependencies only (test/helpers/consumer.ts), and the
 * app is compiled with `skipLibCheck: false`. Every type the declarations import must come with the package,
 * and `event.db` and `publish`'s `client` must be pg's types, not `any`; apps of `/testing` and `/replay` compile
 * too; a catalog registered in `AnvilTypes` by module augmentation types `app.anvil.publish`. Needs `npm run
 * build` first (dist/).
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT, consumerProject } from './helpers/consumer.js'

const run = promisify(execFile)
// One whole-program compile (about 10 s of CPU); a shared, busy machine may stretch it.
t.setTimeout(180_000)

const app = consumerProject('anvil-package-types-')
t.teardown(app.cleanup)
const packDir = mkdtempSync(join(tmpdir(), 'anvil-pack-'))
t.teardown(() => rmSync(packDir, { recursive: true, force: true }))

const { stdout } = await run('npm', ['pack', '--pack-destination', packDir, '--ignore-scripts', '--silent'], { cwd: ROOT })
const tarball = join(packDir, stdout.trim().split('\n').pop() as string)
const installed = join(app.dir, 'node_modules/@anvil/fastify')
mkdirSync(installed, { recursive: true })
await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])

// The app, and one of the other two entries (/testing, /replay); compiled together, once per skipLibCheck setting.
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
writeFileSync(join(app.dir, 'both.ts'), "import './app.js'\nimport './kit.js'\n")

t.test('an app using event.db and publish({ client }), /testing and /replay compiles against the tarball with skipLibCheck off, and neither is any', async (t) => {
  const result = await app.tsc('both.ts')
  t.equal(result.output.trim(), '', 'no error, none from inside dist/ (TS7016: a declaration without its types)')
  t.equal(result.code, 0)
})

t.test('with skipLibCheck on, event.db and publish\'s client are still not any', async (t) => {
  // skipLibCheck hides a declaration's missing import: what it named became any, and the @ts-expect-error lines would fail.
  const result = await app.tsc('app.ts', true)
  t.equal(result.output.trim(), '', 'the @ts-expect-error lines still hold')
  t.equal(result.code, 0)
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
  const result = await app.tsc('catalog.ts')
  t.equal(result.output.trim(), '', 'no error: each @ts-expect-error met one')
  t.equal(result.code, 0)
})
