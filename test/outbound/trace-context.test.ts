/**
 * Trace context (issue 37, contract 3): a publish inside an active OpenTelemetry span, or with a `traceparent` header
 * on `POST /admin/messages`, reaches a real receiver as W3C `traceparent` (and `tracestate`) on its delivery; with
 * telemetry, the spans publish → dispatch → attempt are one trace, parent to child, and the receiver's parent is the
 * attempt. A real OpenTelemetry SDK with its in-memory exporter; without telemetry the header is carried as given,
 * and a malformed one is ignored.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { trace, SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { BullMQOtel } from 'bullmq-otel'
import { createDeliveryWorker } from '../../src/delivery/delivery-worker.js'
import { outboundInternals, type Outbound } from '../../src/outbox/outbound.js'
import { migrate } from '../../src/db/migrate.js'
import anvilAdmin from '../../plugins/admin/admin.js'
import { outboundFixture } from '../helpers/outbound.js'
import { beforeAll } from '../helpers/before-all.js'
import { startReceiver, type Received } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'

const fixture = outboundFixture()
const { db, redis } = fixture
const TOKEN = 'admin-token-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER = `00-${CALLER_TRACE}-00f067aa0ba902b7-01`
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/

const exporter = new InMemorySpanExporter()
beforeAll(t, async () => {
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  provider.register()
  return provider
}, async (provider) => await provider.shutdown())

const receiver = beforeAll(t, async () => await startReceiver(), async (r) => await r.close())

/** A service, its admin API and a delivery worker on queue `name`, traced or not; `schema` its own, so its dispatcher claims only its messages. */
function side (name: string, traced: boolean): { outbound: Outbound, app: FastifyInstance } {
  const telemetry = traced ? { telemetry: new BullMQOtel({ tracerName: 'anvil' }) } : {}
  return beforeAll(t, async () => {
    if (name !== 'anvil') await migrate(db.pool(1), { schema: name })
    const outbound = fixture.open({ queueName: name, schema: name, dispatch: { pollIntervalMs: 100 }, ...telemetry })
    const app = Fastify()
    await app.register(anvilAdmin, { token: TOKEN, outbound })
    const worker = createDeliveryWorker({ redis: redis.url, store: outboundInternals(outbound).store, queueName: name, allowNets: '127.0.0.0/8', jitter: 0, ...telemetry })
    await Promise.all([worker.start(), outbound.dispatcher.start()])
    return { outbound, app, worker }
  }, async ({ app, worker }) => { await app.close(); await worker.close() })
}
const traced = side('anvil', true)
const plain = side('plain', false)

const delivered = async (messageId: string): Promise<Received> => {
  await eventually('the delivery arrives', async () => receiver.received.some((r) => r.headers['webhook-id'] === messageId))
  return receiver.received.find((r) => r.headers['webhook-id'] === messageId) as Received
}

const spansOf = (traceId: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId)
const parentOf = (span: ReadableSpan | undefined): string | undefined => span?.parentSpanContext?.spanId

async function publishOver (t: Test, app: FastifyInstance, headers: Record<string, string>, tenant: string): Promise<string> {
  const answer = await app.inject({ method: 'POST', url: '/admin/messages', headers: { ...auth, ...headers }, payload: { type: 'order.paid', data: { n: 1 }, tenant } })
  t.equal(answer.statusCode, 202)
  return answer.json().messageId as string
}

t.test('a publish inside a span: the receiver gets its trace; publish → dispatch → attempt are one trace, parent to child', async (t) => {
  const { outbound } = traced
  await outbound.endpoints.create({ url: receiver.url + '/traced', tenant: 't1' })
  const tracer = trace.getTracer('shop')
  let root: { traceId: string, spanId: string } | undefined
  const { messageId } = await tracer.startActiveSpan('checkout', async (span) => {
    root = span.spanContext()
    try { return await outbound.publish({ type: 'order.paid', data: { n: 1 }, tenant: 't1' }) } finally { span.end() }
  })
  const got = await delivered(messageId)
  const header = TRACEPARENT.exec(String(got.headers.traceparent))
  t.equal(header?.[1], root?.traceId, 'the receiver sees the publisher\'s trace id')

  await eventually('the attempt span ends', async () => spansOf(root?.traceId ?? '').some((span) => span.name === 'attempt order.paid'))
  const spans = spansOf(root?.traceId ?? '')
  const named = (name: string): ReadableSpan | undefined => spans.find((span) => span.name === name)
  const [publish, dispatch, attempt] = [named('publish order.paid'), named('dispatch order.paid'), named('attempt order.paid')]
  t.equal(parentOf(publish), root?.spanId, 'publish is the caller\'s span\'s child')
  t.equal(parentOf(dispatch), publish?.spanContext().spanId, 'dispatch is publish\'s child')
  t.equal(parentOf(attempt), dispatch?.spanContext().spanId, 'attempt is dispatch\'s child')
  t.equal(header?.[2], attempt?.spanContext().spanId, 'the receiver\'s parent is the attempt')
  t.same([publish?.kind, dispatch?.kind, attempt?.kind], [SpanKind.PRODUCER, SpanKind.INTERNAL, SpanKind.CLIENT])
  t.equal(attempt?.attributes['http.response.status_code'], 200)
  t.equal(attempt?.attributes['anvil.message.id'], messageId)

  const [row] = await db.query<{ traceparent: string }>('SELECT traceparent FROM anvil.outbox WHERE id = $1', [messageId])
  t.equal(row?.traceparent, `00-${root?.traceId ?? ''}-${publish?.spanContext().spanId ?? ''}-01`, 'the message keeps its publish span\'s context')
  const client = new Redis(redis.url)
  const endpoint = (await outbound.endpoints.list({ tenant: 't1' })).items[0]?.id ?? ''
  const job = JSON.parse(await client.hget(`{anvil}:anvil:${messageId}.${endpoint}`, 'data') ?? '{}')
  await client.quit()
  t.equal(job.traceparent, `00-${root?.traceId ?? ''}-${dispatch?.spanContext().spanId ?? ''}-01`, 'the job carries its dispatch span\'s context')
})

t.test('traced: a traceparent header on POST /admin/messages is the publish\'s parent; a malformed one starts a trace of its own', async (t) => {
  const { outbound, app } = traced
  await outbound.endpoints.create({ url: receiver.url + '/traced-header', tenant: 't2' })
  const got = await delivered(await publishOver(t, app, { traceparent: CALLER, tracestate: 'shop=a1' }, 't2'))
  t.equal(TRACEPARENT.exec(String(got.headers.traceparent))?.[1], CALLER_TRACE, 'the caller\'s trace reaches the receiver')
  t.equal(got.headers.tracestate, 'shop=a1', 'with its tracestate')
  const publish = spansOf(CALLER_TRACE).find((span) => span.name === 'publish order.paid')
  t.equal(parentOf(publish), '00f067aa0ba902b7', 'publish is the caller\'s span\'s child')

  const bad = `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`
  const other = await delivered(await publishOver(t, app, { traceparent: bad, tracestate: 'shop=a1' }, 't2'))
  const fresh = TRACEPARENT.exec(String(other.headers.traceparent))
  t.ok(fresh !== null, 'a trace of its own, started by the publish')
  t.not(fresh?.[1], '0'.repeat(32))
  t.equal(other.headers.tracestate, undefined, 'the tracestate of an ignored traceparent is dropped too')
})

t.test('without telemetry: the header is carried as given (a later version as 00), a malformed or absent one sends none', async (t) => {
  const { outbound, app } = plain
  await outbound.endpoints.create({ url: receiver.url + '/plain', tenant: 'p' })
  const got = await delivered(await publishOver(t, app, { traceparent: CALLER, tracestate: 'shop=a1,other=b2' }, 'p'))
  t.equal(got.headers.traceparent, CALLER)
  t.equal(got.headers.tracestate, 'shop=a1,other=b2')
  const later = await delivered(await publishOver(t, app, { traceparent: `01-${CALLER_TRACE}-00f067aa0ba902b7-01-future` }, 'p'))
  t.equal(later.headers.traceparent, CALLER, 'version 01 with more fields is read by its first four and sent as 00')
  for (const malformed of ['00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', `00-${CALLER_TRACE}-${'0'.repeat(16)}-01`, `ff-${CALLER_TRACE}-00f067aa0ba902b7-01`, `00-${CALLER_TRACE}-00f067aa0ba902b7-01-x`, 'nonsense']) {
    const none = await delivered(await publishOver(t, app, { traceparent: malformed }, 'p'))
    t.equal(none.headers.traceparent, undefined, `${malformed}: ignored`)
  }
  const { messageId } = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'p' }, { traceparent: CALLER })
  t.equal((await delivered(messageId)).headers.traceparent, CALLER, 'publish() takes it as an option too')
  const untraced = await outbound.publish({ type: 'order.paid', data: {}, tenant: 'p' })
  t.equal((await delivered(untraced.messageId)).headers.traceparent, undefined, 'no trace, no header')
})

t.test('a custom header may not be traceparent or tracestate; the OpenAPI document shows the headers', async (t) => {
  const { app } = plain
  for (const name of ['traceparent', 'Tracestate']) {
    const answer = await app.inject({ method: 'POST', url: '/admin/endpoints', headers: auth, payload: { url: receiver.url + '/c', headers: { [name]: CALLER } } })
    t.equal(answer.statusCode, 400, `${name} refused`)
  }
  const spec = (await app.inject({ url: '/admin/openapi.json', headers: auth })).json()
  const parameters = spec.paths['/admin/messages'].post.parameters as Array<{ in: string, name: string }>
  t.same(parameters.filter((p) => p.in === 'header').map((p) => p.name).sort(), ['traceparent', 'tracestate'])
})
