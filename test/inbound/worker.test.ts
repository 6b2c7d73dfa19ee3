/**
 * The worker's contract: `createWorker` returns start/close (plus sweep, worker, running), `close` waits
 * for active jobs up to `shutdownTimeoutMs` and then forces without losing the job, and the handler gets a
 * typed event (raw bytes, lazy json, headers, receivedAt, 1-based attempt).
 */
import t from 'tap'
import { Job, Queue } from 'bullmq'
import { setTimeout as sleep } from 'node:timers/promises'
import { startTarget } from '../helpers/target.js'
import { chainOn } from '../helpers/chain.js'
import { buildApp, signed, SECRET } from '../helpers/app.js'
import { createWorker, type WebhookHandler } from '../../src/worker/worker.js'
import type { AnvilLogger } from '../../src/shared/logger.js'
import { signatureKey } from '../../src/inbound/idempotency.js'
import { signAnvil } from '../../src/providers/anvil.js'
import type { WebhookEvent } from '../../src/worker/webhook-event.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())
const { ingressFor, workerFor, queueFor } = chainOn(t, redis)

const PREFIX = '{anvil}'

/** A promise with its resolve function, for handlers the test releases. */
function deferred (): { promise: Promise<void>, resolve: () => void } {
  let resolve = (): void => {}
  const promise = new Promise<void>((r) => { resolve = r })
  return { promise, resolve }
}

async function stateOf (queue: Queue, id: string): Promise<string> {
  const job = await Job.fromId(queue, id)
  return job === undefined ? 'missing' : await job.getState()
}

t.test('createWorker returns start, close, sweep, worker and running; start and close toggle running', async (t) => {
  const w = workerFor('shape', () => {})
  t.type(w.start, 'function')
  t.type(w.close, 'function')
  t.type(w.sweep, 'function')
  t.ok(w.worker, 'exposes the BullMQ worker')
  t.equal(w.running, false, 'not running before start')
  await w.start()
  t.equal(w.running, true, 'running after start')
  t.equal(w.worker.isRunning(), true)
  await w.close()
  t.equal(w.running, false, 'not running after close')
  t.equal(w.worker.isRunning(), false, 'the BullMQ worker has stopped')
  await w.close() // a second close is harmless
})

t.test('createWorker refuses bad options', async (t) => {
  t.throws(() => createWorker(undefined as unknown as WebhookHandler, { redis: redis.url }), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
  t.throws(() => createWorker(() => {}, { redis: redis.url, concurrency: 0 }), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
  t.throws(() => createWorker(() => {}, { redis: redis.url, shutdownTimeoutMs: -1 }), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
  t.throws(() => createWorker(() => {}, { redis: redis.url, sweepIntervalMs: 1.5 }), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
  // Unknown keys are refused with one line that names them: a misspelt option must not leave a default in force.
  t.throws(() => createWorker(() => {}, { redis: redis.url, concurency: 4 } as never), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /concurency/ })
  t.throws(() => createWorker(() => {}, { redis: redis.url, queueName: 'a:b' }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /queueName/ })
  t.throws(() => createWorker(() => {}, { redis: redis.url, logger: { info () {} } as never }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /logger/ })
})

t.test('close waits for an active job that finishes within the shutdown timeout; the job completes', async (t) => {
  const queueName = 'graceful'
  const ingress = ingressFor(queueName)
  const started = deferred()
  let finished = false
  const w = workerFor(queueName, async () => {
    started.resolve()
    await sleep(400)
    finished = true
  }, { shutdownTimeoutMs: 5000 })
  await w.start()
  const { jobId } = await ingress.enqueue({ n: 1 })
  await started.promise
  await w.close()
  t.equal(finished, true, 'the handler finished before close resolved')
  t.equal(await stateOf(queueFor(queueName), jobId), 'completed')
})

t.test('close forces after the shutdown timeout; the hung job is not lost and another worker completes it', async (t) => {
  const queueName = 'forced'
  const ingress = ingressFor(queueName)
  const queue = queueFor(queueName)
  const stalls = { lockDurationMs: 1000, stalledIntervalMs: 500 }
  const started = deferred()
  const never = deferred() // released only at teardown: the first handler hangs past the timeout
  t.teardown(() => never.resolve())
  const warned: Array<[object, string | undefined]> = []
  const logger: AnvilLogger = { info () {}, warn (obj, msg) { warned.push([obj, msg]) }, error () {} }
  const first = workerFor(queueName, async () => {
    started.resolve()
    await never.promise
  }, { shutdownTimeoutMs: 500, ...stalls, logger })
  await first.start()
  const { jobId } = await ingress.enqueue({ n: 'hang' })
  await started.promise

  // The handler never ends: close returns only by forcing, once its timeout has run out, and says so.
  await first.close()
  t.match(warned, [[{ timeoutMs: 500 }, /shutdown timeout, forcing/]], 'close waited out the timeout, then forced')
  t.equal(first.running, false)
  t.equal(await stateOf(queue, jobId), 'active', 'the job is still there, active, to be recovered')

  const seen: WebhookEvent[] = []
  const second = workerFor(queueName, (event) => { seen.push(event) }, stalls)
  await second.start()
  await eventually('the recovered job to complete', async () => await stateOf(queue, jobId) === 'completed')
  t.equal(seen.length, 1, 'the second worker ran it once')
  t.equal(seen[0]?.id, jobId)
})

t.test('the handler gets the raw bytes, a lazy json(), headers, receivedAt and the event ids', async (t) => {
  const queueName = 'events'
  const app = await buildApp(redis.url, { queueName })
  t.teardown(() => app.close())
  const events: WebhookEvent[] = []
  const w = workerFor(queueName, (event) => {
    events.push(event)
  })
  await w.start()

  // Not UTF-8 and not JSON: NUL, 0xFF, a lone continuation byte, an overlong sequence, a truncated one.
  const binary = Buffer.from([0x00, 0xff, 0x80, 0xc0, 0xaf, 0x7b, 0x22, 0xe2, 0x82, 0x00, 0xfe, 0xff])
  const before = Date.now()
  const res = await app.inject(signed(binary, {
    'content-type': 'application/octet-stream', 'x-custom': 'yes', authorization: 'Bearer secret-token'
  }))
  const after = Date.now()
  t.equal(res.statusCode, 202, res.body)
  const { jobId } = res.json<{ jobId: string }>()

  const json = JSON.stringify({ id: 'evt_json', nested: { n: 1 } })
  const res2 = await app.inject(signed(json))
  t.equal(res2.statusCode, 202, res2.body)

  await eventually('two events', () => events.length === 2)
  const event = events.find((e) => e.id === jobId)
  if (event === undefined) throw new Error('no event for the binary job')
  t.ok(Buffer.isBuffer(event.payload), 'payload is a Buffer')
  t.ok(event.payload.equals(binary), 'payload is byte for byte what was sent')
  t.equal(event.key, signatureKey('default', signAnvil(SECRET, binary), binary), 'key is the dedupe key')
  t.equal(await redis.command('exists', `${PREFIX}:${queueName}:de:${event.key}`), 1, 'and that key holds the dedupe window')
  t.throws(() => event.json(), SyntaxError, 'json() throws only when called, for a body that is not JSON')
  t.equal(event.headers['x-custom'], 'yes')
  t.equal(event.headers['content-type'], 'application/octet-stream')
  t.equal(event.contentType, 'application/octet-stream')
  t.notOk('authorization' in event.headers, 'credentials are never stored')
  t.ok(event.receivedAt instanceof Date, 'receivedAt is a Date')
  t.ok(event.receivedAt.getTime() >= before && event.receivedAt.getTime() <= after, 'receivedAt is when it arrived')
  t.equal(event.attempt, 1)
  t.equal(event.source, 'default')
  t.equal(event.provider, 'anvil')
  t.equal(event.replayOf, undefined)

  const jsonEvent = events.find((e) => e.id !== jobId)
  if (jsonEvent === undefined) throw new Error('no event for the JSON job')
  const parsed = jsonEvent.json<{ id: string, nested: { n: number } }>()
  t.same(parsed, { id: 'evt_json', nested: { n: 1 } })
  t.equal(jsonEvent.json(), parsed, 'json() parses once and returns the same value')
  t.equal(jsonEvent.payload.toString('utf8'), json)
})

t.test('enqueue carries eventId and eventType to the event', async (t) => {
  const queueName = 'enqueued'
  const ingress = ingressFor(queueName)
  const events: WebhookEvent[] = []
  const w = workerFor(queueName, (event) => { events.push(event) })
  await w.start()
  const { jobId } = await ingress.enqueue(Buffer.from([0xff, 0x00]), { eventId: 'evt_42', eventType: 'thing.done' })
  await eventually('the event', () => events.length === 1)
  t.match(events[0], { id: jobId, eventId: 'evt_42', eventType: 'thing.done', provider: 'app', attempt: 1 })
  t.ok(events[0]?.payload.equals(Buffer.from([0xff, 0x00])))
})

t.test('the attempt number is 1-based: the third attempt sees 3', async (t) => {
  const queueName = 'attempts'
  const ingress = ingressFor(queueName, { retrySchedule: [50, 50, 50] })
  const attempts: Array<Pick<WebhookEvent, 'attempt' | 'maxAttempts' | 'isLastAttempt'>> = []
  const w = workerFor(queueName, ({ attempt, maxAttempts, isLastAttempt }) => {
    attempts.push({ attempt, maxAttempts, isLastAttempt })
    if (attempt < 3) throw new Error(`fail ${attempt}`)
  })
  await w.start()
  const { jobId } = await ingress.enqueue({ n: 'three' })
  const queue = queueFor(queueName)
  await eventually('completion', async () => await stateOf(queue, jobId) === 'completed')
  t.same(attempts.map((a) => a.attempt), [1, 2, 3])
  t.same(attempts.map((a) => a.maxAttempts), [4, 4, 4], 'three retry steps: four attempts, from the schedule the job carries')
  t.same(attempts.map((a) => a.isLastAttempt), [false, false, false])
})

t.test('the last attempt knows it is the last; the failed-attempt line carries the stack at debug only', async (t) => {
  const queueName = 'last-attempt'
  const ingress = ingressFor(queueName, { retrySchedule: [20] })
  const seen: Array<Pick<WebhookEvent, 'attempt' | 'maxAttempts' | 'isLastAttempt'>> = []
  const lines: Array<Record<string, unknown>> = []
  const logAt = (level: string): AnvilLogger => {
    const levels = ['trace', 'debug', 'info', 'warn', 'error']
    const enabled = (at: string): boolean => levels.indexOf(at) >= levels.indexOf(level)
    const write = (at: string) => (obj: object, msg?: string): void => { if (enabled(at)) lines.push({ ...obj, msg, level: at }) }
    return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), isLevelEnabled: enabled }
  }
  const failing: WebhookHandler = ({ attempt, maxAttempts, isLastAttempt }) => {
    seen.push({ attempt, maxAttempts, isLastAttempt })
    throw new Error('handler broke')
  }
  const atDebug = createWorker(failing, { redis: redis.url, queueName, prefix: PREFIX, sweepIntervalMs: 0, logger: logAt('debug') })
  t.teardown(() => atDebug.close())
  await atDebug.start()
  await ingress.enqueue({ n: 'last' })
  await eventually('two failed attempts', () => lines.filter((l) => l.msg === 'anvil worker: attempt failed').length === 2)
  t.same(seen, [{ attempt: 1, maxAttempts: 2, isLastAttempt: false }, { attempt: 2, maxAttempts: 2, isLastAttempt: true }])
  const failed = lines.filter((l) => l.msg === 'anvil worker: attempt failed')
  for (const line of failed) {
    t.equal(line.err, 'handler broke')
    t.match(line.stack, /^Error: handler broke\n\s+at /, 'the stack, at debug')
  }
  await atDebug.close()

  lines.length = 0
  const atInfo = createWorker(failing, { redis: redis.url, queueName, prefix: PREFIX, sweepIntervalMs: 0, logger: logAt('info') })
  t.teardown(() => atInfo.close())
  await atInfo.start()
  await ingress.enqueue({ n: 'quiet' })
  await eventually('a failed attempt', () => lines.some((l) => l.msg === 'anvil worker: attempt failed'))
  t.equal(lines.find((l) => l.msg === 'anvil worker: attempt failed')?.stack, undefined, 'no stack at info')
})
