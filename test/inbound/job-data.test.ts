import t from 'tap'
import { startTarget } from '../helpers/target.js'
import { SECRET, buildApp, signed } from '../helpers/app.js'
import { inspectQueue } from '../helpers/queue.js'
import { DEFAULT_QUEUE_SETTINGS, jobOptions } from '../../src/queue/queue-settings.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())

t.test('a job keeps the payload byte for byte and what the handler needs, never a secret', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'data', idempotency: { header: 'x-event-id' } })
  t.teardown(() => app.close())
  const queue = inspectQueue(redis, 'data')
  t.teardown(() => queue.close())
  // Invalid UTF-8, NUL and 0xFF: a utf8 round trip would turn these into U+FFFD.
  const payload = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0xc3, 0x28, 0x80, 0x7d])
  const before = Date.now()
  const res = await app.inject(signed(payload, {
    'content-type': 'application/octet-stream',
    'x-event-id': 'evt_bin',
    authorization: 'Bearer app-token',
    cookie: 'session=abc',
    connection: 'keep-alive',
    'x-custom': 'kept'
  }))
  t.equal(res.statusCode, 202)
  const job = await queue.getJob(res.json().jobId)
  const data = job?.data
  t.ok(data)
  if (data === undefined) return
  t.same(Buffer.from(data.payload, 'base64'), payload, 'byte for byte')
  t.equal(data.contentType, 'application/octet-stream')
  t.equal(data.signature, signed(payload).headers['x-signature'])
  t.equal(data.eventId, 'evt_bin')
  t.equal(data.source, 'default')
  t.equal(data.provider, 'anvil')
  t.match(data.key, /^[0-9a-f]{64}$/)
  t.ok(data.receivedAt >= before && data.receivedAt <= Date.now())
  t.same(data.retry, [1000, 5000, 30000, 300000])
  t.equal(data.headers['x-custom'], 'kept')
  t.notOk('authorization' in data.headers, 'credentials are not stored')
  t.notOk('cookie' in data.headers)
  t.equal(data.headers['content-type'], 'application/octet-stream', 'the event\'s own headers are kept')
  t.notOk('content-length' in data.headers, 'the length is the payload\'s, not stored twice')
  t.notOk('connection' in data.headers, 'headers about the connection are not the event\'s')

  const stored = JSON.stringify(await redis.command('hgetall', `{anvil}:data:${job?.id}`))
  t.notMatch(stored, SECRET, 'the secret is nowhere in the job hash')
  t.notMatch(stored, 'app-token')
  t.equal(job?.opts.attempts, 5, 'one attempt plus one per retry step')
  t.same(job?.opts, { ...jobOptions(DEFAULT_QUEUE_SETTINGS), jobId: job?.id, deduplication: { id: data.key, ttl: DEFAULT_QUEUE_SETTINGS.dedupeWindowMs } },
    'every job option the queue settings give, and nothing else')
})
