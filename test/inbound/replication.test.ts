import t from 'tap'
import { TestRedis } from '../helpers/redis.js'
import { WebhookQueue } from '../../src/queue/webhook-queue.js'
import { resolveQueueSettings } from '../../src/inbound/ingress-options.js'
import { eventually } from '../helpers/eventually.js'

function event (id: string): Parameters<WebhookQueue['enqueue']>[0] {
  return { source: 'default', key: id, payload: Buffer.from(id), headers: {}, receivedAt: Date.now() }
}

t.test('opt-in WAIT: a 202 only once a replica has the write', async (t) => {
  const primary = await TestRedis.start()
  t.teardown(() => primary.stop())
  const replica = await TestRedis.start(['--replicaof', '127.0.0.1', String(primary.port)])
  t.teardown(() => replica.stop())
  await eventually('the replica linked to its primary', async () => String(await replica.command('info', 'replication')).includes('master_link_status:up'))

  const settings = resolveQueueSettings({ queueName: 'replicated' })
  const waiting = new WebhookQueue({ redis: primary.url, settings, enqueueTimeoutMs: 1000, replication: { replicas: 1, timeoutMs: 300 } })
  const plain = new WebhookQueue({ redis: primary.url, settings, enqueueTimeoutMs: 1000 })
  t.teardown(async () => { await waiting.close(); await plain.close() })
  await waiting.waitForRedis(2000)
  await plain.waitForRedis(2000)

  const { jobId } = await waiting.enqueue(event('with-replica'))
  t.equal(await replica.command('exists', `{anvil}:replicated:${jobId}`), 1, 'the replica had the job when enqueue returned')

  await replica.kill()
  await t.rejects(waiting.enqueue(event('no-replica')), {
    code: 'ANVIL_ERR_REDIS_UNAVAILABLE',
    cause: { message: /WAIT: 0 of 1 replica\(s\) acknowledged within 300 ms/ }
  }, 'no replica: 503, so the provider retries')
  const unreplicated = await plain.enqueue(event('plain'))
  t.equal(unreplicated.replayed, false, 'without the option the same add is acknowledged at once')
})

t.test('replication options are checked', async (t) => {
  const settings = resolveQueueSettings({})
  for (const replication of [{ replicas: 0, timeoutMs: 100 }, { replicas: 1, timeoutMs: 0 }, { replicas: 1, timeoutMs: 5000 }]) {
    t.throws(() => new WebhookQueue({ redis: 'redis://127.0.0.1:1', settings, enqueueTimeoutMs: 1500, replication }), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
  }
  t.throws(() => new WebhookQueue({ redis: 'redis+cluster://127.0.0.1:1', settings, replication: { replicas: 1, timeoutMs: 100 } }),
    { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /Cluster/ })
})
