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

/**
 * The README's snippet: the example from its first import to the end of buildService, importing the package by name.
 * test/package-types.test.ts compiles it as pasted, against the packed package.
 */
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
