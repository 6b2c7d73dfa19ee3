/**
 * `ANVIL_TRACING=otlp`: real `anvil serve` and `anvil worker` processes export to an OTLP/HTTP receiver run
 * here; off (the default), no optional OpenTelemetry package is even asked for. Helpers: test/helpers/cli.ts.
 */
import t, { type Test } from 'tap'
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createServer as createTcpServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseJson, ROOT, runCli, startCli, tempDir } from '../helpers/cli.js'
import { TestRedis } from '../helpers/redis.js'
import { signAnvil } from '../../src/providers/anvil.js'
import { beforeAll } from '../helpers/before-all.js'

const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const SECRET = 'whsec_tracing_0123'
/** OTLP span kinds (the JSON encoding's enum). */
const SERVER = 2
const CONSUMER = 5

interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  service: string
  attributes: Record<string, unknown>
}

/** An OTLP/HTTP collector: takes POST /v1/traces with JSON bodies, keeps the spans, answers 200. */
async function startReceiver (t: Test): Promise<{ url: string, spans: OtlpSpan[], contentTypes: Set<string> }> {
  const spans: OtlpSpan[] = []
  const contentTypes = new Set<string>()
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        contentTypes.add(request.headers['content-type'] ?? '')
        spans.push(...flatten(JSON.parse(Buffer.concat(chunks).toString('utf8'))))
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, contentTypes }
}

type Attribute = { key: string, value: Record<string, unknown> }
const attributes = (list: Attribute[] = []): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]))

function flatten (body: any): OtlpSpan[] {
  return (body.resourceSpans ?? []).flatMap((resource: any) => {
    const service = String(attributes(resource.resource?.attributes)['service.name'])
    return (resource.scopeSpans ?? []).flatMap((scope: any) => (scope.spans ?? []).map((span: any) => ({
      traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId || undefined,
      name: span.name, kind: span.kind, service, attributes: attributes(span.attributes)
    })))
  })
}

/** The span and its ancestors, as far as the collected spans go. */
function ancestry (span: OtlpSpan, spans: OtlpSpan[]): OtlpSpan[] {
  const chain = [span]
  for (let at = span; at.parentSpanId !== undefined;) {
    const parent = spans.find((candidate) => candidate.spanId === at.parentSpanId)
    if (parent === undefined) break
    chain.push(parent)
    at = parent
  }
  return chain
}

async function post (port: number, body: string, traceparent: string): Promise<{ status: number, jobId: string }> {
  const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-signature': signAnvil(SECRET, body), traceparent },
    body
  })
  return { status: response.status, jobId: ((await response.json()) as { jobId: string }).jobId }
}

t.test('otlp: the request span (serve) and the job span (worker) are in one trace, parent to child', async (t) => {
  const receiver = await startReceiver(t)
  const queueName = 'cli-tracing'
  const common = { REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HOST: '127.0.0.1', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }
  const serve = startCli(t, ['serve'], { env: { ...common, PORT: '0', WEBHOOK_SECRET: SECRET, ANVIL_TRACING: 'otlp' } })
  // The flag instead of the variable, and a service name of the user's.
  const worker = startCli(t, ['worker', '--handler', 'examples/handler.js', '--tracing', 'otlp'], {
    env: { ...common, PORT: '0', OTEL_SERVICE_NAME: 'billing-worker' }
  })
  const port = await serve.listeningPort('anvil serve: listening')
  await worker.log('anvil worker: started')

  // Two senders' traceparents (the second asks not to be sampled), sent together so they may share one addBulk.
  const traces = ['4bf92f3577b34da6a3ce929d0e0e4736', '5cf92f3577b34da6a3ce929d0e0e4737']
  const accepted = await Promise.all(traces.map(async (traceId, i) =>
    await post(port, JSON.stringify({ id: `evt_trace_${i}`, type: 'test.ping' }), `00-${traceId}-00f067aa0ba902b${i}-0${1 - i}`)))
  t.same(accepted.map((a) => a.status), [202, 202])
  for (const { jobId } of accepted) await worker.line((line) => parseJson(line)?.handled === jobId)
  // Probes and scrapes are frequent and say nothing about webhooks: they get no spans.
  t.equal((await fetch(`http://127.0.0.1:${port}/health/live`)).status, 200)
  t.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 200)

  // SIGTERM flushes what is buffered: no waiting for the batch processor's schedule.
  t.equal(await worker.stop('SIGTERM'), 0)
  t.equal(await serve.stop('SIGTERM'), 0)
  t.same([...receiver.contentTypes], ['application/json'], 'OTLP over HTTP with JSON bodies')

  for (const [i, traceId] of traces.entries()) {
    const job = receiver.spans.find((span) => span.kind === CONSUMER && span.attributes['bullmq.job.id'] === accepted[i]?.jobId)
    t.ok(job !== undefined, `event ${i}: a job-processing span`)
    if (job === undefined) continue
    t.equal(job.name, `process ${queueName}`)
    t.equal(job.service, 'billing-worker', 'OTEL_SERVICE_NAME names the worker')
    // The sender's traceparent (and its "sampled" flag) is not trusted: each webhook starts its own trace.
    t.not(job.traceId, traceId, `event ${i}: not in the trace the sender chose`)
    const request = ancestry(job, receiver.spans).find((span) => span.kind === SERVER)
    t.ok(request !== undefined, `event ${i}: the job span descends from the HTTP server span`)
    t.match(request, { name: 'request', service: 'anvil-serve', traceId: job.traceId, attributes: { 'http.route': '/webhooks', 'http.request.method': 'POST' } })
    t.notOk(request?.parentSpanId, 'the server span is the root of its trace')
  }
  const jobTraces = accepted.map(({ jobId }) => receiver.spans.find((span) => span.kind === CONSUMER && span.attributes['bullmq.job.id'] === jobId)?.traceId)
  t.equal(new Set(jobTraces).size, 2, 'two webhooks, two traces, even when they share one addBulk')
  t.notOk(receiver.spans.some((span) => /^\/(health|metrics)/.test(String(span.attributes['url.path']))), 'no spans for probes or scrapes')
  t.ok(receiver.spans.some((span) => span.attributes['url.path'] === '/webhooks'), 'while webhooks have theirs')
})

t.test('otlp with an unreachable collector: SIGTERM still exits 0, the flush gives up', async (t) => {
  // Accepts connections and never answers: the exporter's request hangs until its own (longer) timeout.
  const sockets = new Set<Socket>()
  const blackHole = createTcpServer((socket) => { sockets.add(socket) })
  await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    blackHole.close()
  })
  const serve = startCli(t, ['serve'], {
    env: {
      REDIS_URL: redis.url, ANVIL_QUEUE: 'cli-tracing-hang', HOST: '127.0.0.1', PORT: '0', WEBHOOK_SECRET: SECRET,
      ANVIL_TRACING: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${(blackHole.address() as AddressInfo).port}/v1/traces`
    }
  })
  const port = await serve.listeningPort('anvil serve: listening')
  t.equal((await post(port, '{"id":"evt_hang"}', '00-6cf92f3577b34da6a3ce929d0e0e4738-00f067aa0ba902b7-01')).status, 202)
  t.equal(await serve.stop('SIGTERM'), 0, 'within the shutdown grace, which is shorter than the exporter timeout')
  await serve.log('anvil: tracing flush timed out; unsent spans dropped')
})

t.test('off (default): works with the optional packages absent, and never asks for one', async (t) => {
  const dir = tempDir(t)
  const blockLog = join(dir, 'blocked.txt')
  const absent = { NODE_OPTIONS: `--import ${pathToFileURL(join(ROOT, 'test', 'fixtures', 'no-otel.mjs')).href}`, OTEL_BLOCK_LOG: blockLog }
  const queueName = 'cli-tracing-off'
  const common = { ...absent, REDIS_URL: redis.url, ANVIL_QUEUE: queueName, HOST: '127.0.0.1' }
  const serve = startCli(t, ['serve'], { env: { ...common, PORT: '0', WEBHOOK_SECRET: SECRET } })
  const worker = startCli(t, ['worker', '--handler', 'examples/handler.js'], { env: { ...common, PORT: '0', ANVIL_TRACING: 'off' } })
  const port = await serve.listeningPort('anvil serve: listening')
  await worker.log('anvil worker: started')
  const { status, jobId } = await post(port, '{"id":"evt_off","type":"test.ping"}', '00-7cf92f3577b34da6a3ce929d0e0e4739-00f067aa0ba902b7-01')
  t.equal(status, 202)
  await worker.line((line) => parseJson(line)?.handled === jobId)
  t.equal(await worker.stop('SIGTERM'), 0)
  t.equal(await serve.stop('SIGTERM'), 0)
  t.notOk(existsSync(blockLog), 'no optional OpenTelemetry package was imported or required')

  // The same absence with tracing asked for: one line that says what to install, exit 1.
  const on = await runCli(['serve'], { env: { ...common, PORT: '0', WEBHOOK_SECRET: SECRET, ANVIL_TRACING: 'otlp' } })
  t.equal(on.code, 1)
  t.match(on.stderr, /^anvil: ANVIL_TRACING=otlp needs the optional OpenTelemetry packages, and \S+ is not installed: npm install @opentelemetry\/api .*bullmq-otel\n$/)
})

t.test('an invalid ANVIL_TRACING or --tracing: one clear line, exit 1, nothing started', async (t) => {
  const bad = await runCli(['serve'], { env: { WEBHOOK_SECRET: SECRET, ANVIL_TRACING: 'jaeger' } })
  t.equal(bad.code, 1)
  t.equal(bad.stderr, 'anvil: invalid configuration: ANVIL_TRACING must be off or otlp (got "jaeger")\n')
  const flag = await runCli(['worker', '--handler', 'examples/handler.js', '--tracing', 'on'], { env: { REDIS_URL: redis.url } })
  t.equal(flag.code, 1)
  t.equal(flag.stderr, 'anvil: invalid configuration: --tracing must be off or otlp (got "on")\n')
})
