import t from 'tap'
import { buildService } from '../examples/existing-service.js'
import type { WebhookEvent } from '../index.js'
import { startTarget } from './helpers/target.js'
import { signed } from './helpers/app.js'
import { signAnvil } from '../src/providers/anvil.js'

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

t.test('the README shows the example as it is', async (t) => {
  const { readFile } = await import('node:fs/promises')
  const example = await readFile(new URL('../examples/existing-service.ts', import.meta.url), 'utf8')
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8')
  const start = example.indexOf('export async function buildService')
  const body = example.slice(start, example.indexOf('  return app\n}\n', start) + '  return app\n}\n'.length)
  t.ok(start > 0 && body.length > 200)
  t.ok(readme.includes(body), 'README.md holds buildService from examples/existing-service.ts verbatim')
})
