/**
 * The fixed retry schedule: N delays mean the first attempt plus N retries, every step is used, the end of
 * the schedule is -1 (never 0, which BullMQ reads as "retry now"), and the schedule travels on the job.
 */
import t from 'tap'
import { Job, Queue } from 'bullmq'
import { startTarget } from '../helpers/target.js'
import { chainOn } from '../helpers/chain.js'
import { SECRET } from '../helpers/app.js'
import { BACKOFF_TYPE, attemptsFor, delayAfter } from '../../src/queue/retry.js'
import { DEFAULT_RETRY_SCHEDULE } from '../../src/shared/constants.js'
import { DEFAULT_QUEUE_SETTINGS, jobOptions } from '../../src/queue/queue-settings.js'
import { resolveIngressOptions } from '../../src/inbound/ingress-options.js'
import type { WebhookJobData } from '../../src/queue/job-data.js'
import { eventually } from '../helpers/eventually.js'

t.test('delayAfter: the delay after attempt n (1-based), and -1 past the end, never 0', async (t) => {
  const schedule = [200, 400, 800]
  t.equal(delayAfter(schedule, 1), 200)
  t.equal(delayAfter(schedule, 2), 400)
  t.equal(delayAfter(schedule, 3), 800, 'the last step is used')
  t.equal(delayAfter(schedule, 4), -1, 'past the end: no retry')
  t.equal(delayAfter(schedule, 100), -1)
  t.equal(delayAfter(schedule, 0), -1)
  t.equal(delayAfter([], 1), -1, 'an empty schedule never retries')
  t.equal(delayAfter([0, 0], 2), 0, 'a 0 step is a real "retry now"')
  t.equal(delayAfter([0, 0], 3), -1, 'and the end is still -1')
  for (let n = 1; n <= 6; n++) {
    t.not(delayAfter(DEFAULT_RETRY_SCHEDULE, n), 0, `default schedule after attempt ${n} is not 0`)
  }
})

t.test('attemptsFor: the first attempt plus one per step', async (t) => {
  t.equal(attemptsFor([]), 1)
  t.equal(attemptsFor([200, 400, 800]), 4)
  t.equal(attemptsFor(DEFAULT_RETRY_SCHEDULE), 5)
})

t.test('the schedule\'s schema checks it where the options are: whole ms from 0 to a day a step, at most 99 retries; the result is a frozen copy', async (t) => {
  for (const bad of [[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY], ['1000'], [86_400_001], 'abc', 1000, null, [null], Array.from({ length: 100 }, () => 1)]) {
    t.throws(() => resolveIngressOptions({ secret: SECRET, retrySchedule: bad as number[] }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /retrySchedule/ }, `rejects ${JSON.stringify(bad)?.slice(0, 40)}`)
  }
  const input = [0, 1000, 86_400_000]
  const { settings } = resolveIngressOptions({ secret: SECRET, retrySchedule: input })
  t.same(settings.retrySchedule, [0, 1000, 86_400_000])
  t.ok(Object.isFrozen(settings.retrySchedule), 'frozen')
  input.push(3)
  t.same(settings.retrySchedule, [0, 1000, 86_400_000], 'and a copy')
  t.equal(resolveIngressOptions({ secret: SECRET, retrySchedule: Array.from({ length: 99 }, () => 1) }).settings.retrySchedule.length, 99)
})

t.test('the default schedule is 1 s, 5 s, 30 s, 300 s with 5 attempts', async (t) => {
  t.same(DEFAULT_RETRY_SCHEDULE, [1000, 5000, 30000, 300000])
  t.same(DEFAULT_QUEUE_SETTINGS.retrySchedule, DEFAULT_RETRY_SCHEDULE)
  t.match(jobOptions(DEFAULT_QUEUE_SETTINGS), { attempts: 5, backoff: { type: BACKOFF_TYPE } })
})

t.test('against Redis', async (t) => {
  const redis = await startTarget()
  t.teardown(() => redis.stop())
  const { ingressFor, workerFor, queueFor } = chainOn(t, redis)

  async function finalState (queue: Queue<WebhookJobData>, id: string): Promise<Job<WebhookJobData>> {
    await eventually(`job ${id} to finish`, async () => {
      const job = await Job.fromId<WebhookJobData>(queue, id)
      return job !== undefined && (await job.isFailed() || await job.isCompleted())
    })
    // Read again once finished: the first read may predate the move.
    return await Job.fromId(queue, id) as Job<WebhookJobData>
  }

  t.test('the default schedule is stored on the job, and the worker backs off 1 s, 5 s, 30 s, 300 s, then stops', async (t) => {
    const queueName = 'default-schedule'
    const ingress = ingressFor(queueName)
    const { jobId } = await ingress.enqueue({ n: 1 })
    const job = await Job.fromId<WebhookJobData>(queueFor(queueName), jobId)
    if (job === undefined) throw new Error('no job')
    t.same(job.data.retry, [1000, 5000, 30000, 300000], 'the schedule travels on the job as `retry`')
    t.equal(job.opts.attempts, 5, 'attempts = schedule.length + 1, so the 300 s step is reached')
    t.match(job.opts.backoff, { type: BACKOFF_TYPE })
    // BullMQ calls the strategy with the number of attempts made so far, while attemptsMade + 1 < attempts.
    const worker = workerFor(queueName, () => {})
    const strategy = worker.worker.opts.settings?.backoffStrategy
    if (strategy === undefined) throw new Error('the worker has no backoff strategy')
    const err = new Error('x')
    const delays = []
    for (let made = 1; made <= 5; made++) delays.push(await strategy(made, BACKOFF_TYPE, err, job))
    t.same(delays, [1000, 5000, 30000, 300000, -1])
    t.equal(await strategy(1, 'exponential', err, job), -1, 'it answers only for its own type')
  })

  t.test('a shortened schedule [200, 400, 800]: exactly 4 attempts, each gap at least its step', async (t) => {
    const queueName = 'gaps'
    const schedule = [200, 400, 800]
    const ingress = ingressFor(queueName, { retrySchedule: schedule })
    const starts: number[] = []
    const attempts: number[] = []
    const worker = workerFor(queueName, (event) => {
      starts.push(Date.now())
      attempts.push(event.attempt)
      throw new Error(`attempt ${event.attempt} failed`)
    })
    // What the worker's own strategy asks BullMQ for, seen as it answers: the delays, not how long they took.
    const settings = worker.worker.opts.settings
    const strategy = settings?.backoffStrategy
    if (settings === undefined || strategy === undefined) throw new Error('the worker has no backoff strategy')
    const asked: number[] = []
    settings.backoffStrategy = async (...args) => { const delay = await strategy(...args); asked.push(delay); return delay }
    await worker.start()
    const { jobId } = await ingress.enqueue({ n: 'always fails' })
    const job = await finalState(queueFor(queueName), jobId)
    // Failed is final: no fifth attempt can follow it.
    t.equal(await job.isFailed(), true, 'the job ends failed')
    t.equal(job.attemptsMade, 4)
    t.same(attempts, [1, 2, 3, 4], 'exactly 4 attempts: the first plus one per step')
    t.equal(job.failedReason, 'attempt 4 failed')
    t.same(asked, schedule, 'each retry was delayed by its step')
    for (let i = 0; i < schedule.length; i++) {
      const step = schedule[i] as number
      // A lower bound only: a retry never starts before its step (a slow machine can only make the gap longer).
      t.ok((starts[i + 1] as number) - (starts[i] as number) >= step, `retry ${i + 1} started no sooner than its step of ${step} ms`)
    }
  })

  t.test('a job that carries no schedule fails after its attempt instead of hanging', async (t) => {
    const queueName = 'no-schedule'
    let calls = 0
    const worker = workerFor(queueName, () => {
      calls++
      throw new Error('no schedule')
    })
    await worker.start()
    const queue = queueFor(queueName)
    // Not made by Anvil: Anvil's backoff type but no `retry` in the data.
    const data = { v: 1, source: 'raw', key: 'k', payload: '', headers: {}, receivedAt: Date.now() } as unknown as WebhookJobData
    await queue.add('webhook', data, { jobId: 'raw_1', attempts: 3, backoff: { type: BACKOFF_TYPE } })
    const job = await finalState(queue, 'raw_1')
    t.equal(await job.isFailed(), true)
    t.equal(job.failedReason, 'no schedule', 'failed by its own error, not as stalled')
    t.equal(calls, 1)
  })

  t.test('the worker follows the schedule on each job, not one of its own', async (t) => {
    const queueName = 'per-job'
    const none = ingressFor(queueName, { retrySchedule: [] })
    const one = ingressFor(queueName, { retrySchedule: [50] })
    const attempts = new Map<string, number>()
    const worker = workerFor(queueName, (event) => {
      attempts.set(event.id, event.attempt)
      throw new Error('no')
    })
    await worker.start()
    const a = await none.enqueue({ n: 'none' })
    const b = await one.enqueue({ n: 'one' })
    const queue = queueFor(queueName)
    const [jobA, jobB] = [await finalState(queue, a.jobId), await finalState(queue, b.jobId)]
    t.equal(jobA.attemptsMade, 1, 'an empty schedule: one attempt')
    t.equal(jobB.attemptsMade, 2, 'one step: two attempts')
    t.equal(attempts.get(a.jobId), 1)
    t.equal(attempts.get(b.jobId), 2)
  })
})
