import t from 'tap'
import Fastify from 'fastify'
import anvil from '../../index.js'
import { startTarget } from '../helpers/target.js'
import { SECRET, buildApp, signed } from '../helpers/app.js'
import { inspectQueue } from '../helpers/queue.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())

t.test('every content type, and none, reaches the route as raw bytes', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'types' })
  t.teardown(() => app.close())
  const queue = inspectQueue(redis, 'types')
  t.teardown(() => queue.close())
  const cases: Array<[string | undefined, Buffer]> = [
    ['application/json', Buffer.from('{"a":1}')],
    ['application/x-www-form-urlencoded', Buffer.from('a=1&b=%20x')],
    ['text/plain; charset=utf-8', Buffer.from('hello')],
    ['application/octet-stream', Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a])],
    ['application/vnd.custom+xml', Buffer.from('<a/>')],
    [undefined, Buffer.from('no content type')],
    // Not JSON, though it says so: the ingress must not parse it.
    ['application/json', Buffer.from('{not json')]
  ]
  for (const [contentType, payload] of cases) {
    const request = signed(payload)
    if (contentType === undefined) delete request.headers['content-type']
    else request.headers['content-type'] = contentType
    const res = await app.inject(request)
    t.equal(res.statusCode, 202, `${contentType ?? 'no content type'}: ${res.body}`)
    const job = await queue.getJob(res.json().jobId)
    t.same(Buffer.from(job?.data.payload ?? '', 'base64'), payload, `${contentType ?? 'none'}: bytes kept`)
    t.equal(job?.data.contentType, contentType)
  }
})

t.test('an empty body is signed and accepted as zero bytes', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'empty' })
  t.teardown(() => app.close())
  const request = signed(Buffer.alloc(0))
  delete request.headers['content-type']
  const res = await app.inject(request)
  t.equal(res.statusCode, 202, res.body)
})

t.test('the host keeps its own parsers, body limit and routes', async (t) => {
  const app = Fastify({ bodyLimit: 100 })
  app.post('/host', async (request) => ({ type: typeof request.body, body: request.body }))
  await app.register(anvil, { redis: redis.url, secret: SECRET, queueName: 'host' })
  app.post('/after', async (request) => ({ body: request.body }))
  t.teardown(() => app.close())

  const host = await app.inject({ method: 'POST', url: '/host', payload: { a: 1 } })
  t.same(host.json(), { type: 'object', body: { a: 1 } }, 'a JSON route registered before still parses JSON')
  const after = await app.inject({ method: 'POST', url: '/after', payload: { b: 2 } })
  t.same(after.json(), { body: { b: 2 } }, 'a JSON route registered after still parses JSON')
  const tooBig = await app.inject({ method: 'POST', url: '/host', payload: { a: 'x'.repeat(200) } })
  t.equal(tooBig.statusCode, 413, "the host's own body limit still applies to its routes")
  const webhook = await app.inject(signed(JSON.stringify({ a: 'x'.repeat(200) })))
  t.equal(webhook.statusCode, 202, "the webhook route has its own limit, not the host's")
  const hostText = await app.inject({ method: 'POST', url: '/host', payload: 'x', headers: { 'content-type': 'application/x-unknown' } })
  t.equal(hostText.statusCode, 415, 'the catch-all parser does not leak into the host')
})

t.test('over the body limit: 413 JSON, never HTML', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'limit', bodyLimit: 1024 })
  t.teardown(() => app.close())
  const atLimit = await app.inject(signed(Buffer.alloc(1024, 0x61)))
  t.equal(atLimit.statusCode, 202, 'exactly at the limit is accepted')
  const over = await app.inject(signed(Buffer.alloc(1025, 0x61)))
  t.equal(over.statusCode, 413)
  t.match(over.headers['content-type'], /^application\/json/)
  t.same(over.json(), { error: 'Body is larger than 1024 bytes', code: 'ANVIL_ERR_BODY_TOO_LARGE' })
})

t.test('the default body limit is 1 MiB', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'default-limit' })
  t.teardown(() => app.close())
  const atLimit = await app.inject(signed(Buffer.alloc(1024 * 1024, 0x61)))
  t.equal(atLimit.statusCode, 202)
  const over = await app.inject(signed(Buffer.alloc(1024 * 1024 + 1, 0x61)))
  t.equal(over.statusCode, 413)
  t.equal(over.json().code, 'ANVIL_ERR_BODY_TOO_LARGE')
})

t.test('only POST on the configured path', async (t) => {
  const app = await buildApp(redis.url, { queueName: 'path', path: '/hooks/in' })
  t.teardown(() => app.close())
  t.equal((await app.inject(signed('{}', {}, '/hooks/in'))).statusCode, 202)
  t.equal((await app.inject(signed('{}'))).statusCode, 404, 'the default path is not registered')
  t.equal((await app.inject({ method: 'GET', url: '/hooks/in' })).statusCode, 404)
})
