import t from 'tap'
import { startTarget } from '../helpers/target.js'
import { buildApp, signed } from '../helpers/app.js'
import { inspectQueue } from '../helpers/queue.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())

t.test('app.anvil.enqueue: objects, strings and buffers, with the same dedupe semantics', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'app' })
  t.teardown(() => app.close())
  const queue = inspectQueue(redis, 'app')
  t.teardown(() => queue.close())

  const a = await app.anvil.enqueue({ order: 1 }, { eventId: 'order-1', eventType: 'order.created' })
  t.equal(a.replayed, false)
  const again = await app.anvil.enqueue({ order: 1, changed: true }, { eventId: 'order-1' })
  t.same(again, { jobId: a.jobId, replayed: true }, 'the same event id is a duplicate, whatever the payload')

  const job = await queue.getJob(a.jobId)
  t.equal(job?.data.contentType, 'application/json')
  t.equal(job?.data.eventType, 'order.created')
  t.equal(job?.data.provider, 'app')
  t.same(JSON.parse(Buffer.from(job?.data.payload ?? '', 'base64').toString()), { order: 1 })

  const text = await app.anvil.enqueue('plain text')
  t.same(await app.anvil.enqueue('plain text'), { jobId: text.jobId, replayed: true }, 'no event id: the payload is the key')
  t.equal((await queue.getJob(text.jobId))?.data.contentType, 'text/plain; charset=utf-8')

  const bytes = await app.anvil.enqueue(Buffer.from([1, 2, 3]), { contentType: 'application/octet-stream' })
  t.same(Buffer.from((await queue.getJob(bytes.jobId))?.data.payload ?? '', 'base64'), Buffer.from([1, 2, 3]))

  const withHeaders = await app.anvil.enqueue('with headers', { headers: { authorization: 'Bearer t0ken', cookie: 's=1', 'x-trace': 'abc' } })
  t.same((await queue.getJob(withHeaders.jobId))?.data.headers, { 'x-trace': 'abc' }, 'credentials passed by the caller are not stored')

  await t.rejects(app.anvil.enqueue(42 as never), { code: 'ANVIL_ERR_INVALID_PAYLOAD' })
  await t.rejects(app.anvil.enqueue({}, { eventId: '' }), { code: 'ANVIL_ERR_INVALID_PAYLOAD' })
})

t.test('enqueue and webhooks share the window only by key: an HTTP body is not an app event id', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'shared', idempotency: { bodyField: 'id' } })
  t.teardown(() => app.close())
  const viaHttp = (await app.inject(signed('{"id":"evt_77"}'))).json()
  const viaApp = await app.anvil.enqueue({ id: 'evt_77' }, { eventId: 'evt_77' })
  t.same(viaApp, { jobId: viaHttp.jobId, replayed: true }, 'the same event id from code is the same event')
})
