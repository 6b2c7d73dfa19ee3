/**
 * Erasure by data subject and removal of a tenant, through the admin API over real HTTP, on real PostgreSQL, Redis and
 * receivers: messages of two subjects and two tenants, some delivered, some retrying at a receiver that fails, one not
 * dispatched yet. An erasure takes its subject's messages, its delivery log's bodies and its jobs, and nothing else;
 * a tenant's removal takes its endpoints, messages, log and portal access. Both answer their counts, answer zeros the
 * second time, are audited, and refuse a portal token.
 */
import t from 'tap'
import Fastify from 'fastify'
import type { AddressInfo } from 'node:net'
import { createHash } from 'node:crypto'
import anvilAdmin from '../../plugins/admin/admin.js'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { outboundInternals } from '../../src/outbox/outbound.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll, beforeStep } from '../helpers/before-all.js'
import { startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const receiver = beforeAll(t, async () => await startReceiver((req, res) => {
  res.statusCode = req.url === '/down' ? 500 : 200
  res.end(`answer to ${JSON.parse(req.body).data.name as string}`)
}), async (receiver) => await receiver.close())

const queueName = 'erasure'
// A failed attempt waits a minute for its retry: its job stays in Redis, delayed, until the erasure.
const outbound = beforeAll(t, async () => fixture.open({ queueName, retrySchedule: [60_000] }))
const worker = beforeAll(t, async () => createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, queueName, allowNets: '127.0.0.0/8' }),
  async (worker) => await worker.close())
beforeStep(t, async () => await worker.start())
const token = 'admin-token-0123456789'
const app = Fastify()
beforeStep(t, async () => await app.register(anvilAdmin, { token, outbound }))
beforeStep(t, async () => await app.listen({ port: 0, host: '127.0.0.1' }))
t.teardown(async () => await app.close())

async function call (method: string, path: string, bearer = token, body?: unknown): Promise<{ status: number, body: any }> {
  const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/admin${path}`, {
    method, headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: res.status, body: await res.json() }
}

/** The keys of the delivery jobs in Redis whose id begins with one of `messages`. */
async function jobKeys (messages: string[]): Promise<string[]> {
  const keys = await redis.command('keys', `*:${queueName}:msg_*`) as string[]
  return keys.filter((key) => messages.some((id) => key.includes(`:${queueName}:${id}.`)) && !key.endsWith(':lock') && !key.endsWith(':logs')).sort()
}
const attemptsOf = async (ids: string[]): Promise<Array<{ message_id: string, response_head: string | null, request_headers: unknown, error: string | null, erased_at: Date | null }>> =>
  await db.query('SELECT message_id, response_head, request_headers, error, erased_at FROM anvil.deliveries WHERE message_id = ANY ($1) ORDER BY id', [ids])

t.test('a subject\'s erasure takes its messages, its log\'s bodies and its jobs; a tenant\'s removal takes the tenant; both audited, both idempotent', async (t) => {
  const ok = await outbound.endpoints.create({ url: `${receiver.url}/ok`, tenant: 'acme' })
  const down = await outbound.endpoints.create({ url: `${receiver.url}/down`, tenant: 'acme' })
  const other = await outbound.endpoints.create({ url: `${receiver.url}/other`, tenant: 'globex' })
  const publish = async (name: string, tenant: string, subject?: string): Promise<string> =>
    (await call('POST', '/messages', token, { type: 'user.updated', data: { name }, tenant, ...(subject === undefined ? {} : { subject }) })).body.messageId
  const alice1 = await publish('alice', 'acme', 'user_alice')
  const bob = await publish('bob', 'acme', 'user_bob')
  const alice2 = await publish('alice', 'globex', 'user_alice')
  const untagged = await publish('nobody', 'globex')
  await outbound.dispatcher.dispatchOnce()
  // Delivered to /ok and /other, failed once at /down and waiting for its retry.
  await eventually('each attempt logged', async () => (await db.query("SELECT 1 FROM anvil.deliveries WHERE status <> 'started'")).length === 6)
  const pending = await publish('alice', 'acme', 'user_alice')
  t.equal((await db.query<{ status: string }>('SELECT status FROM anvil.outbox WHERE id = $1', [pending]))[0]?.status, 'pending', 'one of alice\'s messages not dispatched yet')
  t.same((await call('GET', `/messages/${alice1}`)).body.subject, 'user_alice', 'a message answers its subject')

  const aliceJobs = await jobKeys([alice1, alice2])
  t.equal(aliceJobs.length, 3, 'alice\'s jobs: two delivered (kept by retention), one delayed for its retry')
  const bobJobs = await jobKeys([bob])
  const portal = (await call('POST', '/portal/tokens', token, { tenant: 'acme' })).body
  const globexPortal = (await call('POST', '/portal/tokens', token, { tenant: 'globex' })).body.token
  t.equal((await call('DELETE', '/subjects/user_alice', portal.token)).status, 403, 'a portal token cannot erase')
  t.equal((await call('DELETE', '/tenants/acme', portal.token)).status, 403, 'nor remove a tenant')
  t.equal((await call('GET', '/audit', portal.token)).status, 403, 'nor read the audit')
  t.equal((await call('DELETE', '/subjects/user_alice', 'not-the-admin-token-00')).status, 401)

  const erased = await call('DELETE', '/subjects/user_alice')
  t.equal(erased.status, 200)
  const { audit, ...counts } = erased.body
  t.same(counts, { subject: 'user_alice', messages: 3, pendingMessages: 1, deliveries: 3, jobs: 3, jobsInFlight: 0, events: 0, eventAttempts: 0, eventJobs: 0 })
  t.same((await db.query('SELECT id FROM anvil.outbox WHERE id = ANY ($1)', [[alice1, alice2, pending]])), [], 'the messages are gone')
  const erasedRows = await attemptsOf([alice1, alice2])
  t.equal(erasedRows.length, 3, 'the attempts stay, for the endpoints\' history')
  t.ok(erasedRows.every((row) => row.response_head === null && row.request_headers === null && row.error === null && row.erased_at !== null), 'each without its bodies, marked erased')
  t.same(await jobKeys([alice1, alice2, pending]), [], 'no job of alice is left in Redis')
  t.same(await jobKeys([bob]), bobJobs, 'bob\'s jobs are all there')
  t.ok(bobJobs.length >= 2, 'bob\'s delivered job and his delayed retry')
  const bobRows = await attemptsOf([bob])
  t.ok(bobRows.length === 2 && bobRows.every((row) => row.erased_at === null && row.response_head !== null), 'bob\'s log keeps its bodies')
  t.match(bobRows.map((row) => row.response_head), ['answer to bob', 'answer to bob'])
  t.equal((await db.query('SELECT 1 FROM anvil.outbox WHERE id = ANY ($1)', [[bob, untagged]])).length, 2, 'another subject\'s message and an untagged one stay')
  const listed = (await call('GET', `/deliveries?endpoint=${ok.id}`)).body.items
  t.ok(listed.some((d: any) => d.messageId === alice1 && typeof d.erasedAt === 'string' && d.responseHead === undefined), 'the log answers an erased attempt with its mark and no body')
  const subjectDigest = `sha256:${createHash('sha256').update('user_alice').digest('hex')}`
  t.match(audit, { action: 'subject', target: subjectDigest, actor: /^admin:[0-9a-f]{12}$/, counts: { messages: 3, deliveries: 3, jobs: 3 } })

  const again = await call('DELETE', '/subjects/user_alice')
  t.same({ status: again.status, messages: again.body.messages, deliveries: again.body.deliveries, jobs: again.body.jobs, pending: again.body.pendingMessages },
    { status: 200, messages: 0, deliveries: 0, jobs: 0, pending: 0 }, 'a second erasure finds nothing, and says so with 200')

  // The tenant acme: its two endpoints, bob's message and its log, bob's jobs, its portal link and token.
  t.equal((await call('GET', '/endpoints', portal.token)).status, 200, 'the tenant\'s portal token works before')
  const removed = await call('DELETE', '/tenants/acme')
  t.equal(removed.status, 200)
  t.same({ ...removed.body, audit: undefined }, { tenant: 'acme', endpoints: 2, messages: 1, deliveries: 4, jobs: bobJobs.length, jobsInFlight: 0, portalLinkCodes: 1, audit: undefined },
    'its endpoints, bob\'s message, its log (bob\'s two attempts and alice\'s two erased rows), bob\'s jobs, its link code')
  t.same(await db.query('SELECT id FROM anvil.endpoints WHERE id = ANY ($1)', [[ok.id, down.id]]), [])
  t.same(await db.query('SELECT secret FROM anvil.endpoint_secrets WHERE endpoint_id = ANY ($1)', [[ok.id, down.id]]), [], 'their secrets too')
  t.same(await db.query('SELECT 1 FROM anvil.deliveries WHERE endpoint_id = ANY ($1)', [[ok.id, down.id]]), [])
  t.same(await jobKeys([bob]), [], 'bob\'s jobs are gone')
  t.equal((await call('GET', '/endpoints', portal.token)).status, 401, 'the tenant\'s portal token is refused')
  const code = new URL(portal.url).hash.replace('#code=', '')
  t.equal((await call('POST', '/portal/session', token, { code })).status >= 400, true, 'its portal link opens nothing')
  t.equal((await call('GET', '/endpoints', globexPortal)).body.items?.length, 1, 'another tenant\'s portal and endpoint are untouched')
  t.equal((await db.query('SELECT 1 FROM anvil.deliveries WHERE endpoint_id = $1', [other.id])).length, 2, 'and its log')
  const removedAgain = await call('DELETE', '/tenants/acme')
  t.same({ ...removedAgain.body, audit: undefined }, { tenant: 'acme', endpoints: 0, messages: 0, deliveries: 0, jobs: 0, jobsInFlight: 0, portalLinkCodes: 0, audit: undefined }, 'a second removal: zeros, 200')

  const trail = await call('GET', '/audit')
  t.equal(trail.status, 200)
  t.match(trail.body.items.map((entry: any) => [entry.action, entry.target, entry.counts.messages]),
    [['tenant', 'acme', 0], ['tenant', 'acme', 1], ['subject', subjectDigest, 0], ['subject', subjectDigest, 3]], 'every call audited, newest first')
  t.ok(trail.body.items.every((entry: any) => /^admin:/.test(entry.actor) && !Number.isNaN(Date.parse(entry.at))), 'who and when')
})
