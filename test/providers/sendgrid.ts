/**
 * SendGrid's preset: the conformance checks, then its own contract. The body is a batch, verified as a
 * whole and split: one job per event, keyed on its `sg_event_id` and typed by its `event`, so a
 * redelivery (re-signed) or a later batch holding an event again makes no second job for it.
 */
import t from 'tap'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { EventWebhook } from '@sendgrid/eventwebhook'
import Fastify, { type FastifyInstance } from 'fastify'
import anvil, { anvilMetrics, createWorker, type WebhookEvent } from '../../index.js'
import { eventIdKey, payloadKey } from '../../src/inbound/idempotency.js'
import { TestRedis } from '../helpers/redis.js'
import { conformance, kitHeaders } from '../helpers/providers.js'
import { parseMetrics, sample } from '../helpers/metrics.js'
import { inspectQueue } from '../helpers/queue.js'

import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

// @sendgrid/eventwebhook only verifies: requests are signed by the testing kit's signer (ECDSA P-256 /
// SHA-256 over `timestamp + body`, DER signature in base64, as SendGrid documents), and the SDK's
// verifySignature is shown to accept them. Keys are given as SendGrid shows them: base64 DER.
const pair = (): { privateKey: KeyObject, publicB64: string, publicPem: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return {
    privateKey,
    publicB64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString()
  }
}
const [CURRENT, OLDER, WRONG] = [pair(), pair(), pair()]
const signSendgrid = (key: KeyObject, ts: number, body: string): Record<string, string> => kitHeaders('sendgrid', { body, secret: key, timestamp: ts })
const bodyFor = (id: string): string => JSON.stringify([
  { email: 'a@example.com', event: 'delivered', sg_event_id: `${id}-b`, timestamp: 1 },
  { email: 'b@example.com', event: 'delivered', sg_event_id: `${id}-a`, timestamp: 1 }
])

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

conformance(t, redis, {
  source: { provider: 'sendgrid', secrets: [CURRENT.publicB64, OLDER.publicPem] },
  path: '/sendgrid',
  signers: [CURRENT.privateKey, OLDER.privateKey, WRONG.privateKey],
  body: bodyFor,
  sign: (body, { signer, timestamp }) => ({ headers: signSendgrid(signer as KeyObject, timestamp, body) }),
  timestamped: true,
  eventType: 'delivered',
  // The answer's jobId is the first event's.
  expectedEventId: (id) => `${id}-b`
})

t.test("sendgrid: the SDK's own verifier accepts the test signer's signature", async (t) => {
  const webhook = new EventWebhook()
  const body = bodyFor('sg_sdk')
  const ts = Math.floor(Date.now() / 1000)
  const headers = signSendgrid(CURRENT.privateKey, ts, body)
  const key = webhook.convertPublicKeyToECDSA(CURRENT.publicPem)
  t.equal(webhook.verifySignature(key, body, headers['x-twilio-email-event-webhook-signature'] as string, String(ts)), true)
})

// ---- one job per event ----

interface SendgridEvent { email: string, event: string, sg_event_id?: string, timestamp: number }
const QUEUE = 'sendgrid-batches'
const SOURCE = { provider: 'sendgrid' as const, path: '/sendgrid', secrets: [CURRENT.publicB64, OLDER.publicPem] }
const now = (): number => Math.floor(Date.now() / 1000)
/** Events of the given ids (undefined: none) and types. */
const events = (...specs: Array<[string | undefined, string]>): SendgridEvent[] => specs.map(([id, type], i) => ({
  email: `user${i}@example.com`, event: type, ...(id === undefined ? {} : { sg_event_id: id }), timestamp: 1_700_000_000 + i
}))

async function batchApp (redisUrl: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(anvil, { redis: redisUrl, queueName: QUEUE, sources: [SOURCE], retrySchedule: [] })
  await app.register(anvilMetrics)
  await app.ready()
  return app
}

const queue = beforeAll(t, async () => inspectQueue(redis.url, QUEUE), async (queue) => await queue.close())
const batches = beforeAll(t, async () => await batchApp(redis.url), async (app) => await app.close())

/** POSTs `body` (a string as signed, or events to serialise) signed by `signer` at `ts`. */
async function post (body: string | SendgridEvent[], signer: KeyObject = CURRENT.privateKey, ts = now(), app = batches): Promise<{ statusCode: number, json: any }> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body)
  const res = await app.inject({
    method: 'POST',
    url: '/sendgrid',
    headers: { 'content-type': 'application/json', ...signSendgrid(signer, ts, payload) },
    payload
  })
  return { statusCode: res.statusCode, json: res.body === '' ? undefined : res.json() }
}

t.test('sendgrid: a batch of 3 events → 3 jobs, each with its own event id, type and payload', async (t) => {
  const sent = events(['b3_a', 'processed'], ['b3_b', 'delivered'], ['b3_c', 'open'])
  // Signed as SendGrid might format it; each job holds its event re-serialised.
  const res = await post(JSON.stringify(sent, null, 2))
  t.equal(res.statusCode, 202, JSON.stringify(res.json))
  t.equal(res.json.jobs.length, 3)
  t.same(res.json.jobs.map((job: any) => [job.eventId, job.replayed]), [['b3_a', false], ['b3_b', false], ['b3_c', false]])
  t.equal(new Set(res.json.jobs.map((job: any) => job.jobId)).size, 3, 'three jobs')
  t.equal(res.json.jobId, res.json.jobs[0].jobId, 'jobId is the first event\'s')
  t.equal(res.json.replayed, false)
  for (const [i, event] of sent.entries()) {
    const job = await queue.getJob(res.json.jobs[i].jobId)
    t.equal(job?.data.provider, 'sendgrid')
    t.equal(job?.data.eventId, event.sg_event_id)
    t.equal(job?.data.eventType, event.event)
    t.equal(Buffer.from(job?.data.payload ?? '', 'base64').toString('utf8'), JSON.stringify(event), 'the payload is this event alone')
    t.equal(job?.data.key, eventIdKey('sendgrid', event.sg_event_id as string), 'keyed on sg_event_id like every event-id preset')
  }
})

t.test('sendgrid: the same batch redelivered, re-signed later with the older key → the same jobs, replayed', async (t) => {
  const sent = events(['re_a', 'processed'], ['re_b', 'delivered'], ['re_c', 'click'])
  const first = await post(sent, CURRENT.privateKey, now() - 60)
  const again = await post(sent, OLDER.privateKey, now())
  t.equal(first.statusCode, 202)
  t.equal(again.statusCode, 202, JSON.stringify(again.json))
  t.same(again.json.jobs, first.json.jobs.map((job: any) => ({ ...job, replayed: true })))
  t.same([again.json.jobId, again.json.replayed], [first.json.jobId, true])
})

t.test('sendgrid: a later batch with one old and one new event → the old one replayed with its job, the new one a job of its own', async (t) => {
  const first = await post(events(['mix_old', 'delivered'], ['mix_other', 'open']))
  const before = await queue.count()
  const later = await post(events(['mix_new', 'bounce'], ['mix_old', 'delivered']))
  t.equal(later.statusCode, 202, JSON.stringify(later.json))
  t.same(later.json.jobs[1], { eventId: 'mix_old', jobId: first.json.jobs[0].jobId, replayed: true })
  t.match(later.json.jobs[0], { eventId: 'mix_new', replayed: false })
  t.not(later.json.jobs[0].jobId, first.json.jobs[0].jobId)
  t.same([later.json.jobId, later.json.replayed], [later.json.jobs[0].jobId, false], 'replayed only when every event was seen')
  t.equal(await queue.count(), before + 1, 'one new job')
  t.equal((await queue.getJob(later.json.jobs[0].jobId))?.data.eventType, 'bounce')
})

t.test('sendgrid: an event without sg_event_id is keyed on its bytes; in another batch it is a duplicate', async (t) => {
  const [anonymous] = events([undefined, 'deferred']) as [SendgridEvent]
  const first = await post([anonymous])
  t.equal(first.statusCode, 202, JSON.stringify(first.json))
  t.same(Object.keys(first.json.jobs[0]).sort(), ['jobId', 'replayed'], 'no eventId in its entry')
  const job = await queue.getJob(first.json.jobId)
  t.equal(job?.data.eventId, undefined)
  t.equal(job?.data.key, payloadKey('sendgrid', Buffer.from(JSON.stringify(anonymous))))
  const later = await post([...events(['anon_other', 'open']), anonymous])
  t.same(later.json.jobs[1], { jobId: first.json.jobId, replayed: true })
})

t.test('sendgrid: more events than one Redis pipeline takes → every event its own job, in order', async (t) => {
  const sent = events(...Array.from({ length: 150 }, (_, i): [string, string] => [`many_${i}`, i % 2 === 0 ? 'open' : 'click']))
  const res = await post(sent)
  t.equal(res.statusCode, 202)
  t.same(res.json.jobs.map((job: any) => job.eventId), sent.map((event) => event.sg_event_id))
  const stored = await Promise.all(res.json.jobs.map(async (entry: any) => await queue.getJob(entry.jobId)))
  t.same(stored.map((job) => job?.data.eventId), sent.map((event) => event.sg_event_id), 'each answer entry names its own job')
  t.same(stored.map((job) => job?.data.eventType), sent.map((event) => event.event))
})

t.test('sendgrid: a body that is not an array of event objects, under a valid signature → 400 and no job', async (t) => {
  const before = await queue.count()
  for (const body of ['{"event":"delivered","sg_event_id":"obj"}', 'not json', '[1,2]', '[{"sg_event_id":"x","event":"open"},null]', '[[]]', '']) {
    const res = await post(body)
    t.equal(res.statusCode, 400, body)
    t.equal(res.json.code, 'ANVIL_ERR_INVALID_PAYLOAD')
    t.match(res.json.error, /sendgrid body is a JSON array of event objects/)
  }
  t.equal(await queue.count(), before, 'nothing enqueued')
  // The signature comes first: a malformed body that is not the signed one is a 401.
  const payload = 'not json'
  const res = await batches.inject({ method: 'POST', url: '/sendgrid', headers: signSendgrid(CURRENT.privateKey, now(), '[]'), payload })
  t.equal(res.statusCode, 401)
  // So does the tolerance on the signed timestamp: a stale batch is a 401 STALE before its body is read,
  // however malformed that body is (a replayed capture costs no parsing).
  const stale = await post('not json', CURRENT.privateKey, now() - 3600)
  t.equal(stale.statusCode, 401)
  t.match(stale.json.code, /STALE/)
})

t.test('sendgrid: an empty array → 200 { jobs: [] }, no job (a 2xx, so SendGrid does not retry)', async (t) => {
  const before = await queue.count()
  const res = await post('[]')
  t.equal(res.statusCode, 200)
  t.same(res.json, { jobs: [] })
  t.equal(await queue.count(), before)
})

t.test('sendgrid: metrics count each event of a batch under its own event type', async (t) => {
  const sent = events(['m_a', 'spamreport'], ['m_b', 'spamreport'], ['m_c', 'unsubscribe'])
  await post(sent)
  await post(sent, OLDER.privateKey)
  const m = parseMetrics((await batches.inject({ method: 'GET', url: '/metrics' })).body)
  const labels = (eventType: string): Record<string, string> => ({ source: 'sendgrid', provider: 'sendgrid', event_type: eventType })
  t.equal(sample(m, 'anvil_events_enqueued_total', labels('spamreport')), 2)
  t.equal(sample(m, 'anvil_events_enqueued_total', labels('unsubscribe')), 1)
  t.equal(sample(m, 'anvil_events_duplicate_total', labels('spamreport')), 2)
  t.equal(sample(m, 'anvil_events_duplicate_total', labels('unsubscribe')), 1)
})

t.test('sendgrid: the handler receives one event per job', async (t) => {
  const sent = events(['w_a', 'group_unsubscribe'], ['w_b', 'group_resubscribe'], ['w_c', 'dropped'])
  const res = await post(sent)
  const seen = new Map<string, WebhookEvent>()
  const worker = createWorker((event) => { if (event.eventId?.startsWith('w_') === true) seen.set(event.id, event) }, { redis: redis.url, queueName: QUEUE, sweepIntervalMs: 0 })
  t.teardown(() => worker.close())
  await worker.start()
  await eventually('the batch\'s three jobs handled', () => seen.size === 3)
  for (const [i, event] of sent.entries()) {
    const handled = seen.get(res.json.jobs[i].jobId)
    t.match(handled, { provider: 'sendgrid', source: 'sendgrid', eventId: event.sg_event_id, eventType: event.event })
    t.same(handled?.json(), event, 'one event, not the batch')
  }
})

t.test('sendgrid: Redis fails part way through a batch → 503; the retry of the whole batch doubles nothing and loses nothing', async (t) => {
  const own = await TestRedis.start()
  t.teardown(() => own.stop())
  const app = await batchApp(own.url)
  t.teardown(() => app.close())
  const ownQueue = inspectQueue(own.url, QUEUE)
  t.teardown(() => ownQueue.close())
  // Warm: BullMQ's scripts are loaded and the queue's keys exist before the memory is measured.
  t.equal((await post(events(['warm', 'open']), CURRENT.privateKey, now(), app)).statusCode, 202)
  // Several kB a job once stored: Redis runs out of memory (maxmemory, noeviction) some way into the batch,
  // and refuses the adds from there on, as a full Redis does.
  const sent = events(...Array.from({ length: 60 }, (_, i): [string, string] => [`oom_${i}`, 'delivered']))
    .map((event) => ({ ...event, pad: 'x'.repeat(4000) }))
  const used = Number(/used_memory:(\d+)/.exec(String(await own.command('info', 'memory')))?.[1])
  await own.command('config', 'set', 'maxmemory', used + 150_000)
  const failed = await post(sent, CURRENT.privateKey, now(), app)
  t.equal(failed.statusCode, 503, JSON.stringify(failed.json))
  t.equal(failed.json.code, 'ANVIL_ERR_REDIS_UNAVAILABLE')
  const inBefore = (await ownQueue.getJobs()).filter((job) => job.data.eventId !== 'warm')
  t.ok(inBefore.length > 0 && inBefore.length < sent.length, `part of the batch got in (${inBefore.length} of ${sent.length})`)

  await own.command('config', 'set', 'maxmemory', 0)
  const retry = await post(sent, OLDER.privateKey, now(), app)
  t.equal(retry.statusCode, 202, JSON.stringify(retry.json))
  const earlier = new Map(inBefore.map((job) => [job.data.eventId, job.id]))
  for (const entry of retry.json.jobs) {
    const jobId = earlier.get(entry.eventId)
    if (jobId === undefined) t.equal(entry.replayed, false, `${entry.eventId as string} is new`)
    else t.same([entry.jobId, entry.replayed], [jobId, true], `${entry.eventId as string} came back replayed`)
  }
  t.equal(await ownQueue.count(), sent.length + 1, 'every event once, next to the warm-up one')
})
