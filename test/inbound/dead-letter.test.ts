/**
 * Dead letters: after the last attempt, an UnrecoverableError or a stall past the limit, the job is copied
 * to `<queue>.dead` under `d_<jobId>` with its failure context. Idempotent, and a sweep dead-letters what a
 * crash kept from the `failed` listener.
 */
import t from 'tap'
import { Job, Queue, UnrecoverableError, Worker } from 'bullmq'
import { setTimeout as sleep } from 'node:timers/promises'
import { startTarget } from '../helpers/target.js'
import { chainOn } from '../helpers/chain.js'
import { deadLetter, deadLetterId, type DeadLetterData } from '../../src/worker/dead-letter.js'
import { deadLetterQueueName } from '../../src/queue/open-queues.js'
import { createReplayer } from '../../src/worker/replay.js'
import { STALLED_MESSAGE } from '../../src/shared/constants.js'
import type { WebhookJobData } from '../../src/queue/job-data.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())
const { ingressFor, workerFor, queueFor } = chainOn(t, redis)

const PREFIX = '{anvil}'

async function deadLetterOf (dead: Queue<DeadLetterData>, jobId: string): Promise<Job<DeadLetterData>> {
  let letter: Job<DeadLetterData> | undefined
  await eventually(`the dead letter of ${jobId}`, async () => {
    letter = await Job.fromId<DeadLetterData>(dead, deadLetterId(jobId))
    return letter !== undefined
  })
  return letter as Job<DeadLetterData>
}

t.test('the dead-letter queue is <queue>.dead, the same for worker and replay', async (t) => {
  t.equal(deadLetterQueueName('webhooks'), 'webhooks.dead')
  t.equal(deadLetterQueueName('orders'), 'orders.dead')
  t.equal(deadLetterId('e_abc'), 'd_e_abc')
})

t.test('after the last attempt the job lands in webhooks.dead with its failure context', async (t) => {
  // Default queue name: the dead letters must be in `webhooks.dead`.
  const ingress = ingressFor(undefined, { retrySchedule: [50, 50] })
  const w = workerFor(undefined, (event) => { throw new Error(`boom ${event.attempt}`) })
  await w.start()
  const before = Date.now()
  const { jobId } = await ingress.enqueue({ order: 7 }, { eventId: 'evt_exhausted', eventType: 'order.paid' })
  const dead = queueFor<DeadLetterData>('webhooks.dead')
  const letter = await deadLetterOf(dead, jobId)
  t.equal(letter.id, `d_${jobId}`)
  t.ok(Number.isNaN(Number(letter.id)), 'the id is never integer-like')
  t.equal(letter.data.originalJobId, jobId)
  t.match(letter.data.failureContext, { attempts: 3, lastError: 'boom 3', reason: 'exhausted' })
  t.ok(letter.data.failureContext.failedAt >= before && letter.data.failureContext.failedAt <= Date.now(), 'failedAt is when it failed')
  const original = await Job.fromId<WebhookJobData>(queueFor('webhooks'), jobId)
  t.same(letter.data.job, original?.data, 'the dead letter carries the job data')
  t.equal(letter.data.job.eventType, 'order.paid')
  t.equal(await original?.getState(), 'failed', 'the failed job stays, so its dedupe key still holds')

  const replayer = createReplayer({ redis: redis.url })
  t.teardown(() => replayer.close())
  const listed = await replayer.listDeadLetters()
  t.same(listed.map((l) => l.id), [`d_${jobId}`], 'replay reads the queue the worker wrote')

  t.test('dead-lettering is idempotent: the listener, a sweep and direct calls make one entry', async (t) => {
    const job = await Job.fromId<WebhookJobData>(queueFor('webhooks'), jobId)
    if (job === undefined) throw new Error('no job')
    t.same(await deadLetter(dead, job), { id: `d_${jobId}`, created: false }, 'the listener wrote it already')
    t.same(await deadLetter(dead, job), { id: `d_${jobId}`, created: false })
    await w.sweep()
    await w.sweep()
    t.equal(await dead.count(), 1, 'one dead letter')
    const again = await Job.fromId<DeadLetterData>(dead, `d_${jobId}`)
    t.same(again?.data, letter.data, 'the first entry is kept as it was')
  })
})

t.test('an UnrecoverableError dead-letters at once with reason unrecoverable', async (t) => {
  const queueName = 'unrecoverable'
  const ingress = ingressFor(queueName, { retrySchedule: [50, 50, 50] })
  let calls = 0
  const w = workerFor(queueName, () => {
    calls++
    throw new UnrecoverableError('bad payload')
  })
  await w.start()
  const { jobId } = await ingress.enqueue({ n: 1 })
  const letter = await deadLetterOf(queueFor<DeadLetterData>(deadLetterQueueName(queueName)), jobId)
  t.match(letter.data.failureContext, { attempts: 1, lastError: 'bad payload', reason: 'unrecoverable' })
  // Failed is final: a job retried later would be delayed or waiting instead
  t.equal(await (await Job.fromId(queueFor(queueName), jobId))?.getState(), 'failed', 'the job failed, no retry scheduled')
  t.equal(calls, 1, 'no retry after an UnrecoverableError')
})

t.test('an UnrecoverableError on the last attempt is reason unrecoverable, from the listener and from the sweep', async (t) => {
  const queueName = 'unrecoverable-last'
  const ingress = ingressFor(queueName, { retrySchedule: [20] })
  const w = workerFor(queueName, (event) => {
    throw event.attempt === 2 ? new UnrecoverableError('gave up on attempt 2') : new Error('try again')
  })
  await w.start()
  const { jobId } = await ingress.enqueue({ n: 'last' })
  const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
  const letter = await deadLetterOf(dead, jobId)
  t.match(letter.data.failureContext, { attempts: 2, lastError: 'gave up on attempt 2', reason: 'unrecoverable' })

  // The same failure found by a sweep (its listener never ran): the kept stack tells.
  await letter.remove()
  await w.sweep()
  t.match((await deadLetterOf(dead, jobId)).data.failureContext, { attempts: 2, reason: 'unrecoverable' })
})

t.test('a subclass of UnrecoverableError on the last attempt is reason unrecoverable, from the listener and from the sweep', async (t) => {
  /** Its own name heads the stack BullMQ keeps, so the stack alone cannot tell it from an exhausted job. */
  class BadPayload extends UnrecoverableError {}
  const queueName = 'unrecoverable-subclass'
  const ingress = ingressFor(queueName, { retrySchedule: [20] })
  const w = workerFor(queueName, (event) => {
    throw event.attempt === 2 ? new BadPayload('no such order') : new Error('try again')
  })
  await w.start()
  const { jobId } = await ingress.enqueue({ n: 'subclass' })
  const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
  const letter = await deadLetterOf(dead, jobId)
  t.match(letter.data.failureContext, { attempts: 2, lastError: 'no such order', reason: 'unrecoverable' })

  await letter.remove()
  await w.sweep()
  t.match((await deadLetterOf(dead, jobId)).data.failureContext, { attempts: 2, reason: 'unrecoverable' }, 'the sweep reads the note on the job')

  t.test('an exhausted job swept the same way stays exhausted', async (t) => {
    const plain = 'exhausted-swept'
    const ingress = ingressFor(plain, { retrySchedule: [20] })
    const w = workerFor(plain, () => { throw new Error('still down') })
    await w.start()
    const { jobId } = await ingress.enqueue({ n: 'plain' })
    const dead = queueFor<DeadLetterData>(deadLetterQueueName(plain))
    await (await deadLetterOf(dead, jobId)).remove()
    await w.sweep()
    t.match((await deadLetterOf(dead, jobId)).data.failureContext, { attempts: 2, reason: 'exhausted' })
  })
})

t.test('a job that stalls past the limit is failed by another worker and dead-lettered with reason stalled', async (t) => {
  const queueName = 'stalled'
  const ingress = ingressFor(queueName)
  const stalls = { lockDurationMs: 500, stalledIntervalMs: 250, maxStalledCount: 0 }
  let release = (): void => {}
  const started = new Promise<void>((resolve) => { release = resolve })
  const first = workerFor(queueName, async () => {
    release()
    await new Promise(() => {}) // never settles: the worker "dies" holding the job
  }, { ...stalls, shutdownTimeoutMs: 0 })
  await first.start()
  const { jobId } = await ingress.enqueue({ n: 'stall' })
  await started
  await first.close() // forced at once: the lock is no longer renewed
  let secondCalls = 0
  const second = workerFor(queueName, () => { secondCalls++ }, stalls)
  await second.start()
  const letter = await deadLetterOf(queueFor<DeadLetterData>(deadLetterQueueName(queueName)), jobId)
  t.match(letter.data.failureContext, { reason: 'stalled', lastError: STALLED_MESSAGE })
  t.equal(secondCalls, 0, 'the handler does not run again for a job past the stall limit')
  t.equal(await (await Job.fromId(queueFor(queueName), jobId))?.getState(), 'failed')
})

t.test('a finally-failed job that was never dead-lettered is picked up by sweep on a fresh worker', async (t) => {
  const queueName = 'swept'
  const ingress = ingressFor(queueName, { retrySchedule: [] })
  const queue = queueFor(queueName)
  const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
  // A raw BullMQ worker: no Anvil listener, as if the process crashed between "failed" and "dead-lettered".
  const raw = new Worker<WebhookJobData>(queueName, async () => { throw new Error('raw failure') }, {
    connection: redis.connection(), prefix: PREFIX
  })
  t.teardown(() => raw.close())
  const { jobId } = await ingress.enqueue({ n: 'crash' })
  // An auto-numbered job id ('1', '2', ...): its dead letter must still not look like an integer.
  const numbered = await queue.add('webhook', {
    v: 1, source: 'raw', key: 'k', payload: '', headers: {}, receivedAt: Date.now(), retry: []
  })
  await eventually('both jobs to fail', async () => await queue.getFailedCount() === 2)
  await raw.close()
  t.equal(await dead.count(), 0, 'nothing dead-lettered yet')

  const w = workerFor(queueName, () => {}, { sweepIntervalMs: 60_000 })
  await w.start() // sweeps once on start
  const letter = await deadLetterOf(dead, jobId)
  t.match(letter.data.failureContext, { attempts: 1, lastError: 'raw failure', reason: 'exhausted' })
  const numberedLetter = await deadLetterOf(dead, numbered.id as string)
  t.equal(numberedLetter.id, `d_${numbered.id as string}`)
  t.ok(Number.isNaN(Number(numberedLetter.id)), `${String(numberedLetter.id)} is not integer-like`)
  t.equal(await w.sweep(), 2, 'a later sweep looks at them again (overlap) ...')
  t.equal(await dead.count(), 2, '... and makes no second entry')

  // Each sweep reads from a watermark (less an overlap for clock skew), not the whole failed set.
  const watermark = `${PREFIX}:${queueName}:anvil-swept`
  t.ok(Number(await redis.command('get', watermark)) >= (await Job.fromId(queue, jobId))!.finishedOn!, 'the watermark is past the failures')
  await redis.command('set', watermark, String(Date.now() + 60 * 60 * 1000))
  t.equal(await w.sweep(), 0, 'failures far behind the watermark are not read again')
  await redis.command('del', watermark)
  t.equal(await w.sweep(), 2)
})

t.test('the periodic sweep dead-letters a failure whose listener never ran', async (t) => {
  const queueName = 'periodic'
  const ingress = ingressFor(queueName, { retrySchedule: [] })
  const w = workerFor(queueName, () => { throw new Error('lost listener') }, { sweepIntervalMs: 200 })
  await w.start()
  w.worker.removeAllListeners('failed') // the listener "crashed"
  const { jobId } = await ingress.enqueue({ n: 'periodic' })
  const letter = await deadLetterOf(queueFor<DeadLetterData>(deadLetterQueueName(queueName)), jobId)
  t.match(letter.data.failureContext, { reason: 'exhausted', lastError: 'lost listener' })
})

t.test('a failed job is dead-lettered even when retention keeps no failed jobs', async (t) => {
  const queueName = 'no-failed-kept'
  const ingress = ingressFor(queueName, { retrySchedule: [], retention: { failedCount: 0 } })
  const w = workerFor(queueName, () => { throw new Error('gone at once') })
  await w.start()
  const { jobId } = await ingress.enqueue({ n: 'kept nowhere' })
  const letter = await deadLetterOf(queueFor<DeadLetterData>(deadLetterQueueName(queueName)), jobId)
  t.match(letter.data.failureContext, { reason: 'exhausted', attempts: 1, lastError: 'gone at once' })
  t.equal(await Job.fromId(queueFor(queueName), jobId), undefined, 'the failed job itself was not kept')
})

t.test('retries that are not final are not dead-lettered', async (t) => {
  const queueName = 'not-final'
  const ingress = ingressFor(queueName, { retrySchedule: [50, 50] })
  const w = workerFor(queueName, (event) => {
    if (event.attempt < 3) throw new Error('not yet')
  })
  await w.start()
  const { jobId } = await ingress.enqueue({ n: 'late success' })
  const queue = queueFor(queueName)
  await eventually('completion', async () => await (await Job.fromId(queue, jobId))?.getState() === 'completed')
  await sleep(100)
  t.equal(await queueFor(deadLetterQueueName(queueName)).count(), 0, 'no dead letter for a job that succeeded on a retry')
})
