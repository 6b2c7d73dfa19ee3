import t from 'tap'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import anvil from '../../index.js'
import { TestRedis } from '../helpers/redis.js'
import { SECRET, signed } from '../helpers/app.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

async function clientNames (): Promise<string[]> {
  const list = String(await redis.command('client', 'list'))
  return [...list.matchAll(/ name=(\S*)/g)].map((m) => m[1] as string)
}

t.test('a client Anvil created is closed on close; one it was given is left open', async (t) => {
  const app = Fastify()
  await app.register(anvil, { redis: redis.url, secret: SECRET })
  await app.ready()
  t.ok((await clientNames()).includes('anvil-producer'))
  await app.close()
  t.notOk((await clientNames()).includes('anvil-producer'), 'its own connection is gone')

  const given = new Redis(redis.url, { connectionName: 'callers', enableOfflineQueue: false })
  t.teardown(() => given.disconnect())
  const host = Fastify()
  await host.register(anvil, { redis: given, secret: SECRET })
  t.equal((await host.inject(signed('{"id":1}'))).statusCode, 202)
  await host.close()
  t.equal(given.status, 'ready', "the caller's client is still open")
  t.equal(await given.ping(), 'PONG')
})

t.test('one namespaced decorator, with a name for dependency checks', async (t) => {
  const app = Fastify()
  await app.register(anvil, { redis: redis.url, secret: SECRET })
  t.teardown(() => app.close())
  t.ok(app.hasDecorator('anvil'))
  t.equal(typeof app.anvil.enqueue, 'function')
  t.equal(await app.anvil.ping(), true)
  t.ok(app.hasPlugin('@anvil/fastify'))
})

t.test('bad options fail registration with one clear line', async (t) => {
  const cases: Array<[object, RegExp]> = [
    [{}, /secret \(or secrets, or scheme\) is required/],
    [{ secret: '' }, /secret: Expected string length greater or equal to 1/],
    [{ secret: SECRET, bodyLimit: 0 }, /bodyLimit/],
    [{ secret: SECRET, bodyLimit: 1.5 }, /bodyLimit: Expected integer/],
    [{ secret: SECRET, path: 'webhooks' }, /path/],
    [{ secret: SECRET, queueName: 'a:b' }, /queueName/],
    [{ secret: SECRET, retrySchedule: [1000, -1] }, /retrySchedule/],
    [{ secret: SECRET, dedupeWindowMs: 0 }, /dedupeWindowMs/],
    [{ secret: SECRET, unknownOption: true }, /Unexpected property/],
    [{ secret: SECRET, redis: 42 }, /redis must be a URL string or an ioredis client/],
    [{ secret: SECRET, redis: 'http://localhost' }, /must start with redis:\/\/, rediss:\/\/, redis\+cluster:\/\/ or rediss\+cluster:\/\//],
    [{ secret: SECRET, idempotency: 'nope' }, /idempotency must be/],
    [{ secret: SECRET, retention: { failedAgeSeconds: 100, deadAgeSeconds: 50 } }, /deadAgeSeconds/],
    [{ secret: SECRET, redis: 'redis+cluster://127.0.0.1:7000', prefix: 'anvil' }, /needs a hash tag such as \{anvil\} on a Redis Cluster/],
    [{ secret: SECRET, redis: 'redis://:p%zz@127.0.0.1:6380' }, /credentials that are not valid percent-encoding/],
    [{ secret: SECRET, connectTimeoutMs: -1 }, /connectTimeoutMs must be a whole number >= 0/],
    [{ secret: SECRET, maxInFlightBytes: 0 }, /maxInFlightBytes: Expected integer to be greater or equal to 1/],
    [{ secret: SECRET, maxInFlightBytes: 1.5 }, /maxInFlightBytes: Expected integer/]
  ]
  for (const [options, message] of cases) {
    const app = Fastify()
    const error = await app.register(anvil, { redis: redis.url, ...options } as never).ready().then(() => undefined, (err: Error) => err)
    t.match(error, { code: 'ANVIL_ERR_INVALID_OPTIONS', message }, JSON.stringify(options))
    t.notMatch(String(error?.message), SECRET, 'the secret is not in the message')
    t.notMatch(String(error?.message), '\n', 'one line')
    await app.close().catch(() => {})
  }
})

t.test('a registration that fails after connecting leaves no Redis connection open', async (t) => {
  const producers = async (): Promise<number> => (await clientNames()).filter((name) => name === 'anvil-producer').length
  /** The count once it stops changing: a client that quit leaves the server's list a moment after its answer. */
  const settled = async (expected: number): Promise<number> => {
    await eventually(`${expected} producer connections`, async () => await producers() === expected, 2000).catch(() => {})
    return await producers()
  }
  const before = await producers()

  const taken = Fastify()
  taken.post('/webhooks', async () => 'the host\'s own')
  const collision = await taken.register(anvil, { redis: redis.url, secret: SECRET, connectTimeoutMs: 0 }).ready().then(() => undefined, (err: Error) => err)
  t.match(collision, { code: 'FST_ERR_DUPLICATED_ROUTE' }, 'the host already has POST /webhooks')
  t.equal(await settled(before), before, 'no producer connection is left behind')
  await taken.close().catch(() => {})

  const twice = Fastify()
  await twice.register(anvil, { redis: redis.url, secret: SECRET })
  const again = await twice.register(anvil, { redis: redis.url, secret: SECRET, path: '/other' }).ready().then(() => undefined, (err: Error) => err)
  t.match(again, { code: 'FST_ERR_DEC_ALREADY_PRESENT' }, 'a second anvil on one app is refused')
  t.equal(await settled(before + 1), before + 1, 'only the first registration keeps its connection')
  await twice.close().catch(() => {})
  t.equal(await settled(before), before, 'and closing the app closes it')
})
