import t from 'tap'
import { buildService } from '../../examples/existing-service.js'
import type { WebhookEvent } from '../../index.js'
import { startTarget } from '../helpers/target.js'
import { signed } from '../helpers/app.js'
import { signAnvil } from '../../src/providers/anvil.js'
import { join } from 'node:path'
import { ROOT } from '../helpers/root.js'

t.test('the README example: webhooks and app events both reach the handler', async (t) => {
  const redis = await startTarget()
  t.teardown(() => redis.stop())
  const seen: WebhookEvent[] = []
  let arrived: () => void = () => {}
  const bothArrived = new Promise<void>((resolve) => { arrived = resolve })
  const app = await buildService({
    redisUrl: redis.url,
    webhookSecret: 'whsec_example_0123456',
    onEvent: (event) => { seen.push(event); if (seen.length === 2) arrived() }
  })
  app.log.level = 'silent'
  t.teardown(() => app.close())
  await app.ready()

  const order = await app.inject({ method: 'POST', url: '/orders', payload: { id: '17' } })
  t.equal(order.statusCode, 201)
  t.equal(order.json().replayed, false)

  const body = '{"id":"evt_ex","type":"invoice.paid"}'
  const webhook = await app.inject({ ...signed(body), headers: { 'content-type': 'application/json', 'x-signature': signAnvil('whsec_example_0123456', body) } })
  t.equal(webhook.statusCode, 202)

  await bothArrived
  const byType = Object.fromEntries(seen.map((e) => [e.eventType ?? e.json<{ type: string }>().type, e]))
  t.same(byType['order.created']?.json(), { id: '17' })
  t.equal(byType['invoice.paid']?.payload.toString(), body)
})

/** The README's snippet: the example from its first import to the end of buildService, importing the package by name. */
async function readmeSnippet (): Promise<{ expected: string, shown: string }> {
  const { readFile } = await import('node:fs/promises')
  const example = await readFile(join(ROOT, 'examples/existing-service.ts'), 'utf8')
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
  const start = example.indexOf('import Fastify')
  const end = example.indexOf('  return app\n}\n', start) + '  return app\n}\n'.length
  const expected = example.slice(start, end).replace("from '../index.js'", "from '@anvil/fastify'")
  const block = /```ts\n(import Fastify[\s\S]*?)```/.exec(readme)?.[1] ?? ''
  return { expected, shown: block }
}

t.test('the README shows the example as it is, imports and option types included', async (t) => {
  const { expected, shown } = await readmeSnippet()
  t.ok(expected.includes('export interface ServiceOptions') && expected.includes('export async function buildService'))
  t.equal(shown, expected, 'README.md holds examples/existing-service.ts from its imports to the end of buildService')
})

t.test('the README snippet compiles when pasted into a file of its own', async (t) => {
  const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = await import('node:fs')
  const { join } = await import('node:path')
  const { execFile } = await import('node:child_process')
  const root = ROOT
  // Under the repository (in the ignored .tap folder), so `fastify` resolves from its node_modules; the
  // package's types are the built ones (npm run build first), as a user's compiler sees them.
  mkdirSync(join(root, '.tap'), { recursive: true })
  const dir = mkdtempSync(join(root, '.tap', 'readme-snippet-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'service.ts'), (await readmeSnippet()).shown)
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    extends: join(root, 'tsconfig.json'),
    compilerOptions: { noEmit: true, rootDir: root, paths: { '@anvil/fastify': [join(root, 'dist', 'index.d.ts')] } },
    include: ['service.ts']
  }))
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const result = await new Promise<{ code: number, output: string }>((resolve) => {
    execFile(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], (err, stdout, stderr) => resolve({ code: err === null ? 0 : 1, output: stdout + stderr }))
  })
  t.equal(result.code, 0, result.output)
})
