/**
 * Re-sending messages that ended failed, through the admin API on real PostgreSQL, Redis and HTTP: a message
 * whose dispatch gave up (a job option BullMQ refuses fails every fan-out, with Redis up) and one whose
 * deliveries failed at one endpoint. A re-send goes only to endpoints without a success and none in flight (a
 * hand retry's or a recover's too), under the same webhook-id, once however many calls race; the bulk re-send has a dry run and bounded pages; Redis down is 503.
 */
import t from 'tap'
import Fastify from 'fastify'
import anvilAdmin from '../../plugins/admin/admin.js'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const broken = new Set(['/down', '/held-retry', '/held-recover'])
/** Paths whose requests get no answer until released: a delivery in flight. */
const held = new Map<string, Array<() => void>>()
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  const waiting = held.get(req.url)
  if (waiting !== undefined) return waiting.push(() => res.end())
  res.statusCode = broken.has(req.url) ? 500 : 200
  res.end()
}), async (receiver) => await receiver.close())

const queueName = 'resend'
// Every fan-out of this one fails: its messages end `failed` after two dispatch attempts.
const failing = beforeAll(t, async () => fixture.open({ queueName, deliveryJobOptions: { priority: 1e9 }, dispatch: { attempts: 2, retryBaseMs: 1 } }))
const outbound = beforeAll(t, async () => fixture.open({ queueName, retrySchedule: [] }))
const worker = beforeAll(t, async () => createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, queueName, allowNets: '127.0.0.0/8' }),
  async (worker) => await worker.close())
beforeStep(t, async () => await worker.start())
const app = Fastify()
beforeStep(t, async () => await app.register(anvilAdmin, { token: 'admin-token-0123456789', outbound }))
t.teardown(async () => await app.close())
const headers = { authorization: 'Bearer admin-token-0123456789' }
const post = async (url: string, payload: object = {}): Promise<{ statusCode: number, body: any }> => {
  const res = await app.inject({ method: 'POST', url: `/admin${url}`, headers, payload })
  return { statusCode: res.statusCode, body: res.json() }
}

/** A message published through the failing service, dispatched until it is `failed`. */
async function failedMessage (tenant: string, data: unknown = {}): Promise<string> {
  const { messageId } = await failing.publish({ type: 'order.paid', data, tenant })
  for (let attempt = 0; attempt < 2; attempt++) {
    await db.query('UPDATE anvil.outbox SET next_attempt_at = now() WHERE id = $1', [messageId])
    await failing.dispatcher.dispatchOnce()
  }
  return messageId
}
const status = async (id: string): Promise<string | undefined> =>
  (await db.query<{ status: string }>('SELECT status FROM anvil.outbox WHERE id = $1', [id]))[0]?.status
const receivedFor = (id: string): string[] => receiver.received.filter((r) => r.headers['webhook-id'] === id).map((r) => r.url).sort()

t.test('a message whose dispatch failed for good: a dry run, then 10 re-sends at once deliver it once per endpoint, same webhook-id', async (t) => {
  const a = await outbound.endpoints.create({ url: `${receiver.url}/a`, tenant: 'one' })
  const b = await outbound.endpoints.create({ url: `${receiver.url}/b`, tenant: 'one' })
  const id = await failedMessage('one')
  t.equal(await status(id), 'failed', 'its attempts used by a real failure')
  const dry = await post(`/messages/${id}/resend`, { dryRun: true })
  t.same(dry, { statusCode: 200, body: { messageId: id, status: 'failed', endpointIds: [a.id, b.id].sort(), inFlight: [], delivered: [] } })
  t.equal(await status(id), 'failed', 'a dry run changes nothing')

  const answers = await Promise.all(Array.from({ length: 10 }, async () => await post(`/messages/${id}/resend`)))
  t.same(answers.map((answer) => answer.statusCode), Array(10).fill(202))
  t.equal(answers.flatMap((answer) => answer.body.endpointIds).length, 2, 'one call sent it to both endpoints, the others found it in flight or delivered')
  await receiver.waitFor(2)
  await eventually('(db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND s…', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status = 'success'", [id])).length === 2)
  t.same(receivedFor(id), ['/a', '/b'], 'each endpoint got it once, under the message id')
  t.equal(await status(id), 'dispatched')
  t.same((await post(`/messages/${id}/resend`)).body, { messageId: id, status: 'dispatched', endpointIds: [], inFlight: [], delivered: [a.id, b.id].sort() })
  t.same((await post('/messages/msg_nope/resend')).body, { error: 'no message msg_nope in the outbox', code: 'ANVIL_ERR_NOT_FOUND' })
})

t.test('a message that failed at one endpoint is re-sent to that endpoint only, again after a re-send failed too', async (t) => {
  const ok = await outbound.endpoints.create({ url: `${receiver.url}/ok`, tenant: 'two' })
  const down = await outbound.endpoints.create({ url: `${receiver.url}/down`, tenant: 'two' })
  const { messageId: id } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'two' })
  await outbound.dispatcher.dispatchOnce()
  await eventually('outboundInternals(outbound).queue.getJobState(`${id}.${down.id}`) ===…', async () => await outboundInternals(outbound).queue.getJobState(`${id}.${down.id}`) === 'failed' && await outboundInternals(outbound).queue.getJobState(`${id}.${ok.id}`) === 'completed')
  t.same((await post(`/messages/${id}/resend`)).body, { messageId: id, status: 'dispatched', endpointIds: [down.id], inFlight: [], delivered: [ok.id] })
  await eventually('outboundInternals(outbound).queue.getJobState(`${id}.${down.id}.resen…', async () => await outboundInternals(outbound).queue.getJobState(`${id}.${down.id}.resend`) === 'failed')
  broken.delete('/down')
  t.same((await post(`/messages/${id}/resend`)).body.endpointIds, [down.id], 'the failed re-send is made again')
  await eventually('(db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND e…', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND endpoint_id = $2 AND status = 'success'", [id, down.id])).length === 1)
  t.same(receivedFor(id), ['/down', '/down', '/down', '/ok'], 'the endpoint that had it never got it twice')
  t.same(new Set(receiver.received.filter((r) => r.url === '/down').map((r) => r.headers['webhook-id'])), new Set([id]), 'the same webhook-id every time')
})

t.test('a message whose delivery is in flight under a hand retry or a recover is not re-sent beside it', async (t) => {
  for (const kind of ['retry', 'recover'] as const) {
    const path = `/held-${kind}`
    const endpoint = await outbound.endpoints.create({ url: `${receiver.url}${path}`, tenant: `held-${kind}` })
    const { messageId: id } = await outbound.publish({ type: 'order.paid', data: {}, tenant: `held-${kind}` })
    await outbound.dispatcher.dispatchOnce()
    await eventually('outboundInternals(outbound).queue.getJobState(`${id}.${endpoint.id}`)…', async () => await outboundInternals(outbound).queue.getJobState(`${id}.${endpoint.id}`) === 'failed')
    broken.delete(path)
    held.set(path, [])
    const since = new Date(Date.now() - 60_000).toISOString()
    const failed = await db.query<{ id: string }>('SELECT id FROM anvil.deliveries WHERE message_id = $1', [id])
    const hand = kind === 'retry' ? await post(`/deliveries/${failed[0]?.id ?? ''}/retry`) : await post(`/endpoints/${endpoint.id}/recover`, { since })
    t.equal(hand.statusCode, 202)
    await eventually('receivedFor(id).length === 2', async () => receivedFor(id).length === 2)
    t.same((await post(`/messages/${id}/resend`)).body, { messageId: id, status: 'dispatched', endpointIds: [], inFlight: [endpoint.id], delivered: [] },
      `${kind}: its POST in flight, the re-send leaves it alone`)
    for (const answer of held.get(path) ?? []) answer()
    held.delete(path)
    await eventually('(db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND s…', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE message_id = $1 AND status = 'success'", [id])).length === 1)
    t.same((await post(`/messages/${id}/resend`)).body, { messageId: id, status: 'dispatched', endpointIds: [], inFlight: [], delivered: [endpoint.id] })
    t.same(receivedFor(id), [path, path], `${kind}: the first failure and the hand job's one POST, nothing sent beside it`)
  }
})

t.test('bulk re-send by filter: a dry run in bounded pages, then the real run re-sends each message once', async (t) => {
  const endpoint = await outbound.endpoints.create({ url: `${receiver.url}/bulk`, tenant: 'bulk' })
  await outbound.endpoints.create({ url: `${receiver.url}/other`, tenant: 'other' })
  const ids: string[] = []
  for (let i = 0; i < 5; i++) ids.push(await failedMessage('bulk', { i }))
  const other = await failedMessage('other')
  const pages: any[] = []
  let cursor: string | undefined
  do {
    const page = await post('/messages/resend', { filter: { tenant: 'bulk' }, dryRun: true, limit: 2, ...(cursor === undefined ? {} : { cursor }) })
    t.equal(page.statusCode, 200)
    pages.push(page.body)
    cursor = page.body.next ?? undefined
  } while (cursor !== undefined)
  t.same(pages.map((page) => page.items.length), [2, 2, 1], 'at most the limit per page')
  t.same(pages.flatMap((page) => page.items), ids.map((messageId) => ({ messageId, status: 'failed', endpointIds: [endpoint.id], inFlight: [], delivered: [] })), 'oldest first, what each would do')
  t.same(await Promise.all(ids.map(status)), Array(5).fill('failed'), 'the dry run sent nothing')

  const run = await post('/messages/resend', { filter: { tenant: 'bulk', failure: 'dispatch', since: new Date(Date.now() - 3_600_000).toISOString() } })
  t.equal(run.statusCode, 202)
  t.same(run.body.items.map((item: { messageId: string }) => item.messageId), ids)
  await eventually('ids.every((id) => receivedFor(id).length === 1)', async () => ids.every((id) => receivedFor(id).length === 1))
  t.same((await post('/messages/resend', { filter: { tenant: 'bulk' } })).body, { dryRun: false, items: [], next: null }, 'nothing failed is left')
  t.equal(await status(other), 'failed', 'outside the filter: untouched')
  t.match((await post('/messages/resend', { filter: { since: 'yesterday' } })).body, { code: 'ANVIL_ERR_BAD_REQUEST', error: /filter.since/ })
  t.equal((await post('/messages/resend', { filter: { status: 'failed' } })).statusCode, 400, 'an unknown filter key')
  t.equal((await post('/messages/resend', { limit: 201 })).statusCode, 400, 'a page is at most 200')
})

t.test('Redis down: a re-send is 503 and changes nothing', async (t) => {
  await outbound.endpoints.create({ url: `${receiver.url}/late`, tenant: 'late' })
  const id = await failedMessage('late')
  await worker.close()
  await redis.kill()
  t.same(await post(`/messages/${id}/resend`), { statusCode: 503, body: { error: 'Queue unavailable, retry later', code: 'ANVIL_ERR_REDIS_UNAVAILABLE' } })
  t.equal(await status(id), 'failed')
  await redis.startProcess()
})
