import t from 'tap'
import { createGuardedDispatcher } from '../../src/send/guarded-dispatcher.js'
import { sendWebhook } from '../../src/send/send-webhook.js'
import { parseRetryAfter } from '../../src/send/retry-after.js'
import { startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const dispatcher = createGuardedDispatcher({ allowNets: '127.0.0.0/8' })
t.teardown(() => dispatcher.close())
const options = { dispatcher, timeoutMs: 10_000, responseCapBytes: 4096, bodyTimeoutMs: 1000 }
const post = async (url: string, timeoutMs = options.timeoutMs) =>
  await sendWebhook({ url, headers: { 'content-type': 'application/json' }, body: '{"a":1}' }, { ...options, timeoutMs })

t.test('2xx is success; the answer is kept up to the cap', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.statusCode = 204; res.end() })
  t.teardown(() => receiver.close())
  const result = await post(receiver.url + '/hook')
  t.match(result, { success: true, httpStatus: 204, responseHead: '' })
  t.notOk('errorClass' in result)
  t.equal(receiver.received[0]?.body, '{"a":1}')
  t.equal(receiver.received[0]?.method, 'POST')
})

t.test('3xx is a failure and the redirect is not followed', async (t) => {
  const receiver = await startReceiver((req, res) => {
    if (req.url === '/moved') { res.statusCode = 200; res.end('followed'); return }
    res.statusCode = 307
    res.setHeader('location', '/moved')
    res.end('see elsewhere')
  })
  t.teardown(() => receiver.close())
  const result = await post(receiver.url + '/hook')
  t.match(result, { success: false, httpStatus: 307, errorClass: 'http_3xx', errorMessage: 'HTTP 307', responseHead: 'see elsewhere' })
  t.equal(receiver.received.length, 1, 'only the first request arrived')
})

t.test('4xx, 410, 5xx, and Retry-After on 429 and 503 only', async (t) => {
  const answers: Record<string, [number, Record<string, string>]> = {
    '/400': [400, {}],
    '/410': [410, {}],
    '/429': [429, { 'retry-after': '7' }],
    '/503': [503, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }],
    '/500': [500, { 'retry-after': '7' }]
  }
  const receiver = await startReceiver((req, res) => {
    const [status, headers] = answers[req.url] ?? [404, {}]
    res.writeHead(status, headers).end()
  })
  t.teardown(() => receiver.close())
  t.match(await post(receiver.url + '/400'), { success: false, httpStatus: 400, errorClass: 'http_4xx' })
  t.match(await post(receiver.url + '/410'), { success: false, httpStatus: 410, errorClass: 'http_4xx' })
  const throttled = await post(receiver.url + '/429')
  t.match(throttled, { httpStatus: 429, retryAfterMs: 7000 })
  const unavailable = await post(receiver.url + '/503')
  t.ok(unavailable.retryAfterMs !== undefined && unavailable.retryAfterMs > 30_000 && unavailable.retryAfterMs <= 60_000, 'an HTTP date')
  const failed = await post(receiver.url + '/500')
  t.match(failed, { httpStatus: 500, errorClass: 'http_5xx' })
  t.notOk('retryAfterMs' in failed, 'Retry-After is read on 429 and 503 only')
})

t.test('a receiver that never answers is a timeout', async (t) => {
  const receiver = await startReceiver(() => {})
  t.teardown(() => receiver.close())
  const result = await post(receiver.url + '/hang', 300)
  t.match(result, { success: false, errorClass: 'timeout', responseHead: '' })
  t.notOk('httpStatus' in result)
})

t.test('a receiver that sends headers then stalls its error body is a timeout', async (t) => {
  const receiver = await startReceiver((_req, res) => { res.writeHead(500); res.write('partial') })
  t.teardown(() => receiver.close())
  t.match(await post(receiver.url + '/stall', 300), { success: false, errorClass: 'timeout' })
})

t.test('an error answer dripping a byte at a time, never idle for long, is cut at the total timeout', async (t) => {
  let stopped = false
  const receiver = await startReceiver((_req, res) => {
    res.writeHead(500)
    const drip = setInterval(() => { if (!res.write('.')) return }, 20)
    res.on('close', () => { clearInterval(drip); stopped = true })
  })
  t.teardown(() => receiver.close())
  // Each byte comes well inside undici's body idle timeout: only the total deadline can end this.
  const result = await post(receiver.url + '/drip', 400)
  t.match(result, { success: false, errorClass: 'timeout', errorMessage: /400 ms/ })
  await eventually('the connection to drop', () => stopped)
  t.ok(stopped, 'the connection was dropped')
})

t.test('a 2xx is delivered on its status line: a body that drips gets a short deadline of its own, then the socket is dropped', async (t) => {
  let stopped = false
  const receiver = await startReceiver((_req, res) => {
    res.writeHead(200)
    const drip = setInterval(() => { res.write('ok') }, 20)
    res.on('close', () => { clearInterval(drip); stopped = true })
  })
  t.teardown(() => receiver.close())
  // The total timeout is far past tap's: only the body's own deadline can end this.
  const result = await sendWebhook({ url: receiver.url + '/drip-ok', headers: {}, body: '{}' }, { ...options, timeoutMs: 600_000, bodyTimeoutMs: 300 })
  t.match(result, { success: true, httpStatus: 200, responseHead: /^(ok)+$/ })
  t.notOk('errorClass' in result)
  await eventually('the connection to drop', () => stopped)
  t.ok(stopped, 'the connection was dropped')
})

t.test('a 1 GB answer is capped: 4 KiB kept, the rest never read', async (t) => {
  let written = 0
  let closed = false
  const GIGABYTE = 1024 * 1024 * 1024
  const chunk = Buffer.alloc(64 * 1024, 'x')
  const receiver = await startReceiver((_req, res) => {
    res.writeHead(200, { 'content-length': String(GIGABYTE) })
    res.on('close', () => { closed = true })
    const pump = (): void => {
      while (written < GIGABYTE && !closed) {
        written += chunk.length
        if (!res.write(chunk)) { res.once('drain', pump); return }
      }
    }
    pump()
  })
  t.teardown(() => receiver.close())
  const result = await post(receiver.url + '/huge')
  t.match(result, { success: true, httpStatus: 200 })
  t.equal(result.responseHead.length, 4096)
  await eventually('the connection to close', () => closed)
  t.ok(written < GIGABYTE / 8, 'the sender stopped reading long before the end')
})

t.test('connection refused, and the SSRF guard, are classified', async (t) => {
  const receiver = await startReceiver()
  const { url } = receiver
  await receiver.close()
  t.match(await post(url + '/gone'), { success: false, errorClass: 'connect' })
  const strict = createGuardedDispatcher()
  t.teardown(() => strict.close())
  const refused = await sendWebhook({ url: url + '/x', headers: {}, body: '' }, { ...options, dispatcher: strict })
  t.match(refused, { success: false, errorClass: 'ssrf', errorMessage: /refused/ })
})

t.test('Retry-After values', async (t) => {
  t.equal(parseRetryAfter('120'), 120_000)
  t.equal(parseRetryAfter(' 0 '), 0)
  t.equal(parseRetryAfter(new Date(1_000_000).toUTCString(), 0), 1_000_000)
  t.equal(parseRetryAfter(new Date(0).toUTCString(), 5000), 0, 'a past date is now')
  t.equal(parseRetryAfter('soon'), undefined)
  t.equal(parseRetryAfter('-5'), undefined)
  t.equal(parseRetryAfter(undefined), undefined)
  t.equal(parseRetryAfter(['1', '2']), undefined)
})
