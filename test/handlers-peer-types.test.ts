/**
 * The optional peers, as a user meets them: a consumer is compiled (tsc, skipLibCheck off) against the built
 * declarations copied into a temporary project whose node_modules holds only the package's dependencies.
 * Without any of the type packages (stripe, @octokit/openapi-webhooks-types, @slack/types, discord-api-types,
 * @paddle/paddle-node-sdk, @linear/sdk, square, @gitbeaker/core, @zoom/rivet) it compiles, names are still checked, and
 * payloads are JSON. With them installed, test/types/router.ts (`npm run test:types`) checks the packages'
 * types through the same built declarations. Needs `npm run build` first (dist/).
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
// One whole-program compile (about 10 s of CPU); a shared, busy machine may stretch it.
t.setTimeout(180_000)
const root = resolve(import.meta.dirname, '..')
const dir = mkdtempSync(join(tmpdir(), 'anvil-peer-types-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

// The package as installed: its package.json and its declarations (copied, not linked: a link would let
// the compiler resolve `stripe` from this repository's node_modules).
// An ESM consumer, as the package is: `stripe` then resolves to the same declarations on both sides.
writeFileSync(join(dir, 'package.json'), '{ "type": "module" }')
const pkg = join(dir, 'node_modules/@anvil/fastify')
mkdirSync(pkg, { recursive: true })
writeFileSync(join(pkg, 'package.json'), readFileSync(join(root, 'package.json')))
cpSync(join(root, 'dist'), join(pkg, 'dist'), { recursive: true, filter: (src) => !/\.(js|map)$/.test(src) })
/** The packages the declarations import, linked from this repository (never the optional peers). */
const link = (name: string): void => {
  mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true })
  symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir')
}
// The package's dependencies (and their @types), as npm would install them, and Node's types.
const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
const typesOf = (name: string): string => `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`
for (const name of [...Object.keys(dependencies), ...Object.keys(dependencies).map(typesOf), '@types/node']) {
  if (existsSync(join(root, 'node_modules', name))) link(name)
}

/** skipLibCheck off: the declarations themselves must compile without the peers. */
const tsconfig = (file: string, skipLibCheck: boolean): string => {
  const name = `tsconfig.${file}.json`
  writeFileSync(join(dir, name), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck, types: ['node'] },
    files: [file]
  }))
  return name
}
const tsc = async (file: string, skipLibCheck = false): Promise<{ code: number, output: string }> => {
  try {
    const { stdout } = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', tsconfig(file, skipLibCheck)], { cwd: dir })
    return { code: 0, output: stdout }
  } catch (err) {
    const { code, stdout } = err as { code: number, stdout: string }
    return { code, output: stdout }
  }
}

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
