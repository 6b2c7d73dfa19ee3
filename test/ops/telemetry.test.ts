/**
 * The `telemetry` option of the ingress plugin and of the worker reaches BullMQ, with a real BullMQOtel and
 * the OpenTelemetry SDK exporting to memory. Events enqueued together share one addBulk; each job still
 * carries the context of the request that produced it, so its worker span is that request's child.
 */
import t from 'tap'
import Fastify from 'fastify'
import { context, trace, type Span } from '@opentelemetry/api'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { BullMQOtel } from 'bullmq-otel'
import { anvilWorker, createWorker } from '../../index.js'
import { buildApp, signed } from '../helpers/app.js'
import { inspectQueue } from '../helpers/queue.js'
import { TestRedis } from '../helpers/redis.js'

import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const exporter = new InMemorySpanExporter()
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
// Global: the W3C propagator and the async-local context manager BullMQOtel relies on.
provider.register()
t.teardown(() => provider.shutdown())

const spansNamed = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name === name)
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId

/** The W3C trace context a job carries in its options, as BullMQOtel wrote it. */
function traceparentOf (opts: { telemetry?: { metadata?: string } }): string | undefined {
  const metadata = opts.telemetry?.metadata
  return metadata === undefined ? undefined : (JSON.parse(metadata) as { traceparent?: string }).traceparent
}

t.test('ingress plugin: events enqueued together share one addBulk; each job carries its own request context', async (t) => {
  exporter.reset()
  const queueName = 'otel-batch'
  const app = await buildApp(redis.url, { queueName, telemetry: new BullMQOtel({ tracerName: 'anvil-test' }) })
  t.teardown(() => app.close())
  const tracer = trace.getTracer('test')
  const requests: Span[] = []
  // Both enqueue in the same turn of the event loop, each under its own active span: one micro-batch.
  const results = await Promise.all(['evt_a', 'evt_b'].map(async (id) => await tracer.startActiveSpan(`request ${id}`, async (span) => {
    requests.push(span)
    try {
      return await app.anvil.enqueue({ id }, { eventId: id })
    } finally {
      span.end()
    }
  })))
  t.equal(spansNamed(`addBulk ${queueName}`).length, 1, 'one addBulk for both events')

  const queue = inspectQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  for (const [i, result] of results.entries()) {
    const job = await queue.getJob(result.jobId)
    const request = requests[i]?.spanContext()
    t.equal(traceparentOf(job?.opts ?? {}), `00-${request?.traceId}-${request?.spanId}-01`, `job ${i}: its own request's context`)
  }

  // The worker plugin, given the same kind of telemetry: each attempt's span is the child of its request.
  const host = Fastify({ logger: false })
  await host.register(anvilWorker, {
    redis: redis.url, queueName, sweepIntervalMs: 0, handler: () => {}, telemetry: new BullMQOtel({ tracerName: 'anvil-test' })
  })
  await host.ready()
  t.teardown(() => host.close())
  const processed = await eventually('spans.length === 2 ? spans : undefined', () => {
    const spans = spansNamed(`process ${queueName}`)
    return spans.length === 2 ? spans : undefined
  })
  for (const request of requests.map((span) => span.spanContext())) {
    const child = processed.find((span) => parentOf(span) === request.spanId)
    t.ok(child !== undefined, 'a process span whose parent is the request span')
    t.equal(child?.spanContext().traceId, request.traceId, 'in the request\'s trace')
  }
  t.ok(processed.every((span) => span.kind === 4 /* CONSUMER */))
})

t.test('a webhook request under an incoming traceparent: the job carries that trace', async (t) => {
  const queueName = 'otel-http'
  const app = await buildApp(redis.url, { queueName, telemetry: new BullMQOtel() })
  t.teardown(() => app.close())
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
  const parent = trace.wrapSpanContext({ traceId, spanId: '00f067aa0ba902b7', traceFlags: 1 })
  // Fastify's inject runs the request in the caller's async context, as a server span's context would be.
  const response = await context.with(trace.setSpan(context.active(), parent), async () => await app.inject(signed('{"id":"evt_h"}')))
  t.equal(response.statusCode, 202)
  const queue = inspectQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  const job = await queue.getJob((response.json() as { jobId: string }).jobId)
  t.match(traceparentOf(job?.opts ?? {}), new RegExp(`^00-${traceId}-`))
})

t.test('without telemetry, jobs carry no trace context', async (t) => {
  const queueName = 'otel-none'
  const app = await buildApp(redis.url, { queueName })
  t.teardown(() => app.close())
  const { jobId } = await app.anvil.enqueue({ id: 'evt_plain' }, { eventId: 'evt_plain' })
  const queue = inspectQueue(redis.url, queueName)
  t.teardown(() => queue.close())
  t.equal((await queue.getJob(jobId))?.opts.telemetry, undefined)
})

t.test('a telemetry option that is not a BullMQ Telemetry object is refused with one clear error', async (t) => {
  const message = /^Invalid Anvil options: telemetry must be a BullMQ Telemetry object/
  await t.rejects(buildApp(redis.url, { telemetry: {} as never }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message })
  t.throws(() => createWorker(() => {}, { redis: redis.url, telemetry: 'otel' as never }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message })
})
