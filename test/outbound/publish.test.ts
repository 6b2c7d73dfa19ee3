import t from 'tap'
import pg from 'pg'
import { inTransaction } from '../../src/db/database.js'
import { outboxChannel } from '../../src/outbox/publish.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db } = fixture
const outbound = beforeAll(t, async () => fixture.open())

async function outboxRow (id: string): Promise<Record<string, unknown> | undefined> {
  return (await db.query('SELECT * FROM anvil.outbox WHERE id = $1', [id]))[0]
}

t.test('in the caller\'s transaction: a rollback publishes nothing, a commit publishes once and NOTIFYs on commit', async (t) => {
  const pool = db.pool()
  const outbound = fixture.open({ notifyIntervalMs: 0 })
  await t.rejects(inTransaction(pool, async (client) => {
    await outbound.publish({ type: 'order.paid', data: { n: 1 }, id: 'rolled-back' }, { client })
    throw new Error('the business write failed')
  }), /business write failed/)
  t.equal(await outboxRow('rolled-back'), undefined, 'nothing in the outbox')

  const listener = new pg.Client({ connectionString: db.url })
  await listener.connect()
  t.teardown(async () => await listener.end())
  const heard: string[] = []
  listener.on('notification', (message) => heard.push(message.channel))
  await listener.query(`LISTEN ${pg.escapeIdentifier(outboxChannel('anvil'))}`)

  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const { messageId } = await outbound.publish({ type: 'order.paid', data: { n: 2 }, id: 'committed' }, { client })
    t.equal(messageId, 'committed')
    t.equal(await outboxRow('committed'), undefined, 'not visible outside the transaction before the commit')
    await client.query('COMMIT')
  } finally {
    client.release()
  }
  t.match(await outboxRow('committed'), { status: 'pending', type: 'order.paid', public_type: 'order.paid', data: '{"n":2}' })
  await eventually('heard.length > 0', async () => heard.length > 0)
  // A probe NOTIFY sent after the commit arrives after any the transactions sent: nothing else came before it.
  await db.query("SELECT pg_notify('probe', '')")
  await listener.query('LISTEN probe')
  await db.query("SELECT pg_notify('probe', '')")
  await eventually('heard.includes(\'probe\')', async () => heard.includes('probe'))
  t.same(heard, [outboxChannel('anvil'), 'probe'], 'one NOTIFY, for the committed message only')
  t.equal(await outbound.dispatcher.dispatchOnce(), 1, 'the committed message is dispatched once')
  t.equal(await outbound.dispatcher.dispatchOnce(), 0)
})

t.test('without a client: written at once, a new msg_ id when none is given', async (t) => {
  const { messageId } = await outbound.publish({ type: 'user.created', data: null, tenant: 'acme' })
  t.match(messageId, /^msg_[0-9a-f]{28}$/)
  t.match(await outboxRow(messageId), { tenant: 'acme', data: 'null', status: 'pending' })
})

t.test('the same id twice is one message; the first data stays', async (t) => {
  const first = await outbound.publish({ type: 'a.b', data: { v: 1 }, id: 'same-id' })
  const second = await outbound.publish({ type: 'a.b', data: { v: 2 }, id: 'same-id' })
  t.same(first, second)
  const rows = await db.query('SELECT data FROM anvil.outbox WHERE id = $1', ['same-id'])
  t.same(rows, [{ data: '{"v":1}' }])
})

t.test('data makes the JSON round trip at publish time', async (t) => {
  const when = new Date('2026-01-02T03:04:05.000Z')
  const { messageId } = await outbound.publish({ type: 'a.b', data: { when, gone: undefined, n: Number.NaN, nested: { toJSON: () => 'x' } } })
  t.equal((await outboxRow(messageId))?.data, '{"when":"2026-01-02T03:04:05.000Z","n":null,"nested":"x"}')
})

t.test('non-JSON data, oversized data and bad fields are refused with one clear line', async (t) => {
  const circular: Record<string, unknown> = {}
  circular.self = circular
  await t.rejects(outbound.publish({ type: 'a.b', data: 10n }), { code: 'ANVIL_ERR_INVALID_MESSAGE', statusCode: 400, message: /data is not JSON: .*BigInt/ })
  await t.rejects(outbound.publish({ type: 'a.b', data: circular }), { code: 'ANVIL_ERR_INVALID_MESSAGE', message: /data is not JSON: .*circular/ })
  await t.rejects(outbound.publish({ type: 'a.b', data: () => 1 }), { code: 'ANVIL_ERR_INVALID_MESSAGE', message: /data is not JSON: function/ })
  await t.rejects(outbound.publish({ type: 'a.b', data: 'x'.repeat(256 * 1024) }), { code: 'ANVIL_ERR_PAYLOAD_TOO_LARGE', statusCode: 413, message: /262146 bytes, over the 262144-byte limit/ })
  await t.rejects(outbound.publish({ type: 'has space', data: 1 }), { code: 'ANVIL_ERR_INVALID_MESSAGE', message: /^Invalid message: type must be an event type name/ })
  await t.rejects(outbound.publish({ type: 'a.b', data: 1, id: 'a:b' }), { code: 'ANVIL_ERR_INVALID_MESSAGE', message: /id must be 1 to 128/ })
  await t.rejects(outbound.publish({ type: 'a.b', data: 1, extra: true } as never), { code: 'ANVIL_ERR_INVALID_MESSAGE', message: /extra/ })
  const small = fixture.open({ maxPayloadBytes: 10 })
  await small.publish({ type: 'a.b', data: '12345678' })
  await t.rejects(small.publish({ type: 'a.b', data: '123456789' }), { code: 'ANVIL_ERR_PAYLOAD_TOO_LARGE', message: /11 bytes, over the 10-byte limit/ })
  const rows = await db.query("SELECT count(*)::int AS n FROM anvil.outbox WHERE data LIKE '\"x%' OR data = '\"123456789\"'")
  t.same(rows, [{ n: 0 }], 'nothing refused was written')
})

t.test('an event map renames internal names; a name it lacks is kept but never delivered', async (t) => {
  const mapped = fixture.open({ eventMap: { 'internal.order_paid': 'order.paid', toString: 'not.used' } })
  const endpoint = await mapped.endpoints.create({ url: 'https://example.com/hook', tenant: 'map-tenant' })
  const paid = await mapped.publish({ type: 'internal.order_paid', data: {}, tenant: 'map-tenant' })
  const hidden = await mapped.publish({ type: 'internal.audit', data: {}, tenant: 'map-tenant' })
  const inherited = await mapped.publish({ type: 'constructor', data: {}, tenant: 'map-tenant' })
  t.match(await outboxRow(paid.messageId), { public_type: 'order.paid', status: 'pending' })
  t.match(await outboxRow(hidden.messageId), { public_type: null, status: 'dispatched' })
  t.match(await outboxRow(inherited.messageId), { public_type: null }, 'only the map\'s own keys count')
  await eventually('mapped.dispatcher.dispatchOnce() === 0 && (outboxRow(paid.messageId))…', async () => await mapped.dispatcher.dispatchOnce() === 0 && (await outboxRow(paid.messageId))?.status === 'dispatched')
  const job = await outboundInternals(mapped).queue.getJob(`${paid.messageId}.${endpoint.id}`)
  t.equal(job?.data.eventType, 'order.paid')
  t.same(JSON.parse(String(job?.data.body)).type, 'order.paid')
  t.equal(await outboundInternals(mapped).queue.getJob(`${hidden.messageId}.${endpoint.id}`), undefined, 'the unmapped event has no job')
  await t.rejects(mapped.endpoints.create({ url: 'https://example.com/x', eventTypes: ['internal.audit'] }),
    { code: 'ANVIL_ERR_INVALID_ENDPOINT', message: /"internal.audit" is not a public event type/ })
})

t.test('a pg.Pool that was given is left open by close()', async (t) => {
  const pool = db.pool()
  const outbound = fixture.open({ database: pool })
  await outbound.publish({ type: 'a.b', data: 1 })
  await outbound.close()
  t.same((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }])
})

t.test('bad options are one line', async (t) => {
  t.throws(() => fixture.open({ maxPayloadBytes: 0 }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /outbound maxPayloadBytes/ })
  t.throws(() => fixture.open({ dispatch: { leaseMs: 1 } }), { message: /outbound dispatch.leaseMs/ })
  t.throws(() => fixture.open({ eventMap: { a: 'bad name' } }), { message: /outbound eventMap.a must be an event type name/ })
  t.throws(() => fixture.open({ database: 'mysql://x' }), { message: /database URL must start with postgres/ })
})

t.test('diagnostics channels: a new message is counted once when written, and its dispatch with the jobs it made', async (t) => {
  const { subscribe, unsubscribe } = await import('node:diagnostics_channel')
  const published: unknown[] = []
  const dispatched: unknown[] = []
  const onPublished = (m: unknown): void => { published.push(m) }
  const onDispatched = (m: unknown): void => { dispatched.push(m) }
  subscribe('anvil:outbound:published', onPublished)
  subscribe('anvil:outbound:dispatched', onDispatched)
  t.teardown(() => { unsubscribe('anvil:outbound:published', onPublished); unsubscribe('anvil:outbound:dispatched', onDispatched) })
  const mapped = fixture.open({ eventMap: { 'in.a': 'out.a' }, queueName: 'channels' })
  await mapped.endpoints.create({ url: 'https://ch.example/', tenant: 'channels' })
  await mapped.publish({ type: 'in.a', data: 1, tenant: 'channels', id: 'channel-1' })
  await mapped.publish({ type: 'in.a', data: 1, tenant: 'channels', id: 'channel-1' })
  await mapped.publish({ type: 'in.b', data: 1, tenant: 'channels' })
  t.same(published, [{ eventType: 'out.a', tenant: 'channels' }])
  await eventually('mapped.dispatcher.dispatchOnce() === 0 && dispatched.length > 0', async () => await mapped.dispatcher.dispatchOnce() === 0 && dispatched.length > 0)
  t.same(dispatched.filter((m) => (m as { eventType: string }).eventType === 'out.a'), [{ eventType: 'out.a', jobs: 1 }])
})

t.test('a busy publisher NOTIFYs at most once per interval; the dispatcher\'s poll and busy passes still find every message', async (t) => {
  const listener = new pg.Client({ connectionString: db.url })
  await listener.connect()
  t.teardown(async () => await listener.end())
  let heard = 0
  listener.on('notification', () => { heard++ })
  await listener.query(`LISTEN ${pg.escapeIdentifier(outboxChannel('anvil'))}`)
  const quiet = fixture.open({ notifyIntervalMs: 60_000, queueName: 'quiet' })
  const ids = []
  for (let i = 0; i < 5; i++) ids.push((await quiet.publish({ type: 'quiet.one', data: i, tenant: 'quiet' })).messageId)
  await db.query("SELECT pg_notify('probe', '')")
  await listener.query('LISTEN probe')
  await db.query("SELECT pg_notify('probe', '')")
  await eventually('heard >= 2', async () => heard >= 2)
  t.equal(heard, 2, 'one NOTIFY for five messages (and the probe)')
  await eventually('quiet.dispatcher.dispatchOnce() === 0 && (db.query("SELECT 1 FROM anv…', async () => await quiet.dispatcher.dispatchOnce() === 0 &&
    (await db.query("SELECT 1 FROM anvil.outbox WHERE tenant = 'quiet' AND status = 'pending'")).length === 0)
  t.pass('all five dispatched')
})
