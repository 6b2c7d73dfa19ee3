/**
 * The delivery log under what receivers and operators do: an answer with bytes PostgreSQL's text refuses, and
 * a hand retry while the job's own retry waits. Real PostgreSQL, Redis, HTTP and a delivery worker.
 */
import t, { type Test } from 'tap'
import { createServer, type Server } from 'node:net'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import anvilAdmin from '../../plugins/admin/admin.js'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { storableText } from '../../src/db/storable-text.js'
import { outboundFixture } from '../helpers/outbound.js'
import { startReceiver } from '../helpers/receiver.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { eventually } from '../helpers/eventually.js'

const TOKEN = 'admin-token-0123456789'
const headers = { authorization: `Bearer ${TOKEN}` }
const fixture = outboundFixture()
const { db, redis } = fixture
let queues = 0

/** A service, its dispatcher and a delivery worker on a queue of their own, and the admin API on the service. */
async function service (t: Test, schedule: number[]) {
  const queueName = `log${++queues}`
  const outbound = fixture.open({ queueName, retrySchedule: schedule, dispatch: { pollIntervalMs: 100 } })
  const worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, queueName, allowNets: '127.0.0.0/8', jitter: 0 })
  const app = Fastify()
  await app.register(anvilAdmin, { token: TOKEN, outbound })
  // Its dispatcher stops with the test: the outbox is shared, and a later test's messages are not for this queue.
  t.teardown(async () => {
    await app.close()
    await outbound.dispatcher.close()
    await worker.close()
  })
  await Promise.all([outbound.dispatcher.start(), worker.start()])
  return { outbound, app }
}

/** A receiver on a raw socket, for answers Node's HTTP server refuses to write. */
async function rawReceiver (answer: Buffer): Promise<{ url: string, posts: () => number, server: Server }> {
  let posts = 0
  const server = createServer((socket) => {
    let seen = ''
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1')
      const end = seen.indexOf('\r\n\r\n')
      const length = Number(/content-length: (\d+)/i.exec(seen)?.[1] ?? 0)
      if (end === -1 || seen.length < end + 4 + length) return
      seen = ''
      posts++
      socket.end(answer)
    })
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, posts: () => posts, server }
}

const http = (head: string, body: Buffer): Buffer => Buffer.concat([Buffer.from(`${head}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`, 'latin1'), body])

t.test('storableText: NUL, invalid UTF-8 and lone surrogates become U+FFFD; everything else is kept', async (t) => {
  t.equal(storableText('a\u0000b'), 'a\uFFFDb')
  t.equal(storableText(Buffer.from([0x6f, 0x6b, 0xff, 0xc3])), 'ok\uFFFD\uFFFD')
  t.equal(storableText('x\uD800y\uDC00z'), 'x\uFFFDy\uFFFDz')
  t.equal(storableText('émoji 😀 \u2028 tab\t'), 'émoji 😀 \u2028 tab\t', 'valid text, surrogate pairs included, unchanged')
  const rows = await db.query<{ t: string }>('SELECT $1::text AS t', [storableText('\u0000\uDFFF')])
  t.same(rows, [{ t: '\uFFFD\uFFFD' }], 'PostgreSQL takes it')
})

t.test('a 200 with a NUL byte and invalid UTF-8 in its body: one delivery, logged as a success, shown by the admin API', async (t) => {
  const receiver = await rawReceiver(http('HTTP/1.1 200 OK\r\ncontent-type: text/plain', Buffer.from('ok\u0000\u00ff', 'latin1')))
  const { outbound, app } = await service(t, [300, 300])
  const endpoint = await outbound.endpoints.create({ url: receiver.url, tenant: 'nul' })
  const { messageId } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'nul' })
  await eventually('(db.query(\'SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND s…', async () => (await db.query('SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status <> $2', [messageId, 'started'])).length > 0, 30_000)
  const job = await outboundInternals(outbound).queue.getJob(`${messageId}.${endpoint.id}`)
  await eventually('[\'completed\', \'failed\'].includes(job?.getState() ?? \'\')', async () => ['completed', 'failed'].includes(await job?.getState() ?? ''), 30_000)
  t.equal(await job?.getState(), 'completed')
  t.equal(receiver.posts(), 1, 'delivered once, not again and again')
  const message = (await app.inject({ url: `/admin/messages/${messageId}`, headers })).json()
  t.match(message, { id: messageId, status: 'dispatched' })
  t.match(message.deliveries, [{ attempt: 1, status: 'success', httpStatus: 200, responseHead: 'ok\uFFFD\uFFFD' }])
  t.equal(message.deliveries.length, 1)
  t.same((await app.inject({ url: `/admin/undelivered?endpoint=${endpoint.id}`, headers })).json(), { items: [], next: null })
})

t.test('a NUL byte in a header of the answer: the attempt is logged and shown, whatever it concluded', async (t) => {
  const receiver = await rawReceiver(http('HTTP/1.1 200 OK\r\nx-odd: a\u0000b', Buffer.from('fine')))
  const { outbound, app } = await service(t, [])
  const endpoint = await outbound.endpoints.create({ url: receiver.url, tenant: 'nul-header' })
  const { messageId } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'nul-header' })
  const job = await eventually('outboundInternals(outbound).queue.getJob(`${messageId}.${endpoint.id}…', async () => await outboundInternals(outbound).queue.getJob(`${messageId}.${endpoint.id}`) !== undefined, 30_000)
    .then(async () => await outboundInternals(outbound).queue.getJob(`${messageId}.${endpoint.id}`))
  await eventually('[\'completed\', \'failed\'].includes(job?.getState() ?? \'\')', async () => ['completed', 'failed'].includes(await job?.getState() ?? ''), 30_000)
  t.equal(receiver.posts(), 1)
  const deliveries = (await app.inject({ url: `/admin/deliveries?endpoint=${endpoint.id}`, headers })).json().items
  t.equal(deliveries.length, 1, 'one row for the one POST')
  t.not(deliveries[0].status, 'started', 'completed with its outcome')
})

t.test('the store writes outside text it is given as storable text', async (t) => {
  const outbound = fixture.open()
  const endpoint = await outbound.endpoints.create({ url: 'https://store.example/' })
  const { deliveryId } = await outboundInternals(outbound).store.recordAttempt({
    messageId: 'msg_text', endpointId: endpoint.id, attempt: 1, httpStatus: 500, durationMs: 1, errorClass: 'http_5xx',
    errorMessage: 'bad\u0000\uD800', responseHead: 'head\u0000', payloadSha256: 'x', success: false
  })
  t.match(await outbound.deliveries.get(deliveryId), { error: 'bad\uFFFD\uFFFD', responseHead: 'head\uFFFD' })
})

t.test('a hand retry while the scheduled retry waits: exactly one more POST, and the scheduled one sends nothing', async (t) => {
  let failing = true
  const receiver = await startReceiver((_req, res) => { res.statusCode = failing ? 500 : 200; res.end() })
  t.teardown(() => receiver.close())
  // The scheduled retry waits long enough that a loaded machine cannot reach it first; the test promotes it.
  const { outbound, app } = await service(t, [600_000])
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/retry`, tenant: 'hand' })
  const { messageId } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'hand' })
  await eventually('receiver.received.length >= 1', async () => receiver.received.length >= 1)
  const failed = await eventually('(db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND s…', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status = 'failed'", [messageId])).length === 1)
    .then(async () => (await app.inject({ url: `/admin/deliveries?endpoint=${endpoint.id}&status=failed`, headers })).json().items[0])
  const scheduled = await outboundInternals(outbound).queue.getJob(`${messageId}.${endpoint.id}`)
  t.equal(await scheduled?.getState(), 'delayed', 'its own retry waits')
  failing = false
  const retried = await app.inject({ method: 'POST', url: `/admin/deliveries/${String(failed.id)}/retry`, headers })
  t.equal(retried.statusCode, 202)
  await eventually('receiver.received.length >= 2', async () => receiver.received.length >= 2)
  await eventually('(db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND s…', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status = 'success'", [messageId])).length === 1)
  await scheduled?.promote()
  await eventually('[\'completed\', \'failed\'].includes(scheduled?.getState() ?? \'\')', async () => ['completed', 'failed'].includes(await scheduled?.getState() ?? ''), 20_000)
  t.equal(await scheduled?.getState(), 'completed', 'the scheduled retry ends: its message was delivered')
  t.equal(receiver.received.length, 2, 'the first try and the hand retry; the scheduled retry did not POST again')
  const statuses = (await app.inject({ url: `/admin/messages/${messageId}`, headers })).json().deliveries.map((d: { status: string }) => d.status)
  t.same(statuses, ['failed', 'success'], 'one success in the log')
})
