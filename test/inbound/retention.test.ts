/**
 * Retention: completed jobs are bounded by age and count, failed and dead ones are kept longer, and the
 * dedupe window outlives all of it: a redelivery after completion or after dead-lettering makes no job.
 */
import t from 'tap'
import { Job } from 'bullmq'
import { startTarget } from '../helpers/target.js'
import { chainOn } from '../helpers/chain.js'
import { SECRET } from '../helpers/app.js'
import { resolveIngressOptions, resolveQueueSettings } from '../../src/inbound/ingress-options.js'
import type { AnvilWorker } from '../../src/worker/worker.js'
import { DEFAULT_KEEP_JOBS, DEFAULT_QUEUE_SETTINGS, jobOptions } from '../../src/queue/queue-settings.js'
import { DEFAULT_RETENTION } from '../../src/shared/constants.js'
import { deadLetterId, type DeadLetterData } from '../../src/worker/dead-letter.js'
import { deadLetterQueueName } from '../../src/queue/open-queues.js'
import { eventually } from '../helpers/eventually.js'

t.test('defaults: completed jobs an hour or 1000, failed a week or 10000, dead letters two weeks', async (t) => {
  t.same(DEFAULT_KEEP_JOBS, {
    removeOnComplete: { age: 3600, count: 1000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 10000 }
  })
  t.equal(DEFAULT_RETENTION.deadAgeSeconds, 14 * 24 * 3600)
  t.ok(DEFAULT_RETENTION.failedAgeSeconds > DEFAULT_RETENTION.completedAgeSeconds)
  t.ok(DEFAULT_RETENTION.deadAgeSeconds > DEFAULT_RETENTION.failedAgeSeconds, 'dead letters outlive the failed jobs')
  t.throws(() => resolveIngressOptions({ secret: SECRET, retention: { failedAgeSeconds: 100, deadAgeSeconds: 50 } }),
    { code: 'ANVIL_ERR_INVALID_OPTIONS' }, 'dead letters may not be pruned before their failed jobs')
})

t.test('a job carries retention only when it is not the default, which the worker applies', async (t) => {
  const options = jobOptions(DEFAULT_QUEUE_SETTINGS)
  t.notOk('removeOnComplete' in options, 'default retention: not on the job')
  t.notOk('removeOnFail' in options, 'default retention: not on the job')
  t.same(jobOptions(resolveQueueSettings({ retention: { deadAgeSeconds: 0 } })), options, 'dead letters\' retention is not the jobs\'')
  t.same(jobOptions(resolveQueueSettings({ retention: { completedCount: 5 } })), {
    ...options,
    removeOnComplete: { age: 3600, count: 5 },
    removeOnFail: DEFAULT_KEEP_JOBS.removeOnFail
  }, 'one field changed: the whole retention is on the job')
  t.same(jobOptions(resolveQueueSettings({ retention: { failedAgeSeconds: 60 } })).removeOnFail, { age: 60, count: 10000 })
})

t.test('against Redis', async (t) => {
  const redis = await startTarget()
  t.teardown(() => redis.stop())
  const { ingressFor, workerFor, queueFor } = chainOn(t, redis)
  const PREFIX = '{anvil}'

  /** Counts jobs the worker finished, either way (the events fire after BullMQ moved the job). */
  function finishedCounter (worker: AnvilWorker): () => number {
    let n = 0
    worker.worker.on('completed', () => { n++ })
    worker.worker.on('failed', (job) => { if (job?.finishedOn !== undefined) n++ })
    return () => n
  }

  t.test('completedCount 5: after 30 jobs at most 5 are kept, every dedupe key and redelivery still holds', async (t) => {
    const queueName = 'count'
    const ingress = ingressFor(queueName, { retention: { completedCount: 5 } })
    let handled = 0
    const worker = workerFor(queueName, () => { handled++ })
    const finished = finishedCounter(worker)
    await worker.start()
    const first = []
    for (let i = 0; i < 30; i++) first.push(await ingress.enqueue({ i }, { eventId: `evt_${i}` }))
    await eventually('30 completions', () => finished() === 30)
    const queue = queueFor(queueName)
    const completed = await queue.getCompletedCount()
    t.ok(completed <= 5, `${completed} completed jobs kept`)
    t.equal(await Job.fromId(queue, first[0]?.jobId as string), undefined, 'the first job is gone')

    const kept = await queue.getJobs(['completed'])
    const dedupeKeys = (await redis.command('keys', `${PREFIX}:${queueName}:de:*`)) as string[]
    t.equal(dedupeKeys.length, 30, 'all 30 dedupe keys survive retention')
    t.ok(kept.every((job) => dedupeKeys.includes(`${PREFIX}:${queueName}:de:${job.data.key}`)))

    const again = await ingress.enqueue({ i: 0 }, { eventId: 'evt_0' })
    t.same(again, { jobId: first[0]?.jobId, replayed: true }, 'a redelivery of an early, removed event is replayed')
    // A new event queued behind it: once that one is handled, a job for the redelivery would have run before it.
    await ingress.enqueue({ i: 'after' }, { eventId: 'evt_after' })
    await eventually('the event queued after the redelivery', () => finished() === 31)
    t.equal(handled, 31, 'no job ran for the redelivery')
    t.equal(await queue.count(), 0, 'nothing waiting')
  })

  t.test('default retention, from the worker: jobs that carry none are still bounded at 1000 completed', async (t) => {
    const queueName = 'default-count'
    // 1,020 adds sent at once: on a loaded machine the last wait past the default 1.5 s enqueue timeout (a 503 here).
    const ingress = ingressFor(queueName, { enqueueTimeoutMs: 30_000 })
    const worker = workerFor(queueName, () => {}, { concurrency: 50 })
    const finished = finishedCounter(worker)
    await worker.start()
    const total = DEFAULT_RETENTION.completedCount + 20
    const accepted = await Promise.all(Array.from({ length: total }, async (_, i) => await ingress.enqueue({ i }, { eventId: `d_${i}` })))
    await eventually(`${total} completions`, () => finished() === total, 30_000)
    const queue = queueFor(queueName)
    t.equal(await queue.getCompletedCount(), DEFAULT_RETENTION.completedCount, 'the default count holds')
    const kept = (await queue.getJobs(['completed'], 0, 0))[0]
    t.ok(kept !== undefined && !('removeOnComplete' in kept.opts), 'the job carried no retention of its own')
    const gone = await Promise.all(accepted.map(async ({ jobId }) => await Job.fromId(queue, jobId) === undefined))
    t.equal(gone.filter(Boolean).length, total - DEFAULT_RETENTION.completedCount, 'the rest were removed')
  })

  t.test('completedAgeSeconds: completed jobs older than the age go when another one finishes', async (t) => {
    const queueName = 'age'
    const ingress = ingressFor(queueName, { retention: { completedAgeSeconds: 1 } })
    const worker = workerFor(queueName, () => {})
    const finished = finishedCounter(worker)
    await worker.start()
    const old = []
    for (let i = 0; i < 3; i++) old.push(await ingress.enqueue({ i }, { eventId: `old_${i}` }))
    await eventually('3 completions', () => finished() === 3)
    const queue = queueFor(queueName)
    t.equal(await queue.getCompletedCount(), 3, 'kept while young')
    // Older than completedAgeSeconds by their own finishedOn, which BullMQ's retention compares with.
    await eventually('the three jobs to be older than 1 s', async () =>
      (await queue.getJobs(['completed'])).every((job) => Date.now() - (job.finishedOn ?? Infinity) > 1000))
    await ingress.enqueue({ i: 'new' }, { eventId: 'new' })
    await eventually('the 4th completion', () => finished() === 4)
    t.equal(await queue.getCompletedCount(), 1, 'the old ones were removed by age')
    t.equal(await Job.fromId(queue, old[0]?.jobId as string), undefined)
    t.same(await ingress.enqueue({ i: 0 }, { eventId: 'old_0' }), { jobId: old[0]?.jobId, replayed: true },
      'their dedupe keys still hold')
  })

  t.test('failed jobs are kept longer than completed ones; a redelivery after dead-lettering makes no job', async (t) => {
    const queueName = 'failed-kept'
    const ingress = ingressFor(queueName, { retrySchedule: [], retention: { completedCount: 2 } })
    const worker = workerFor(queueName, (event) => {
      if (event.eventType === 'fail') throw new Error('nope')
    })
    const finished = finishedCounter(worker)
    await worker.start()
    const failed = []
    for (let i = 0; i < 4; i++) failed.push(await ingress.enqueue({ i }, { eventId: `f_${i}`, eventType: 'fail' }))
    for (let i = 0; i < 6; i++) await ingress.enqueue({ i }, { eventId: `ok_${i}`, eventType: 'ok' })
    await eventually('10 finished jobs', () => finished() === 10)
    const queue = queueFor(queueName)
    t.ok(await queue.getCompletedCount() <= 2, 'completed: bounded at 2')
    t.equal(await queue.getFailedCount(), 4, 'failed: all kept')
    const job = await Job.fromId(queue, failed[0]?.jobId as string)
    t.match(job?.opts, { removeOnComplete: { count: 2 }, removeOnFail: DEFAULT_KEEP_JOBS.removeOnFail },
      'retention other than the default is on the job, both sides')

    const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
    await eventually('4 dead letters', async () => await dead.count() === 4)
    const again = await ingress.enqueue({ i: 0 }, { eventId: 'f_0', eventType: 'fail' })
    t.same(again, { jobId: failed[0]?.jobId, replayed: true }, 'a redelivery after dead-lettering is a duplicate')
    // A new event queued behind it: once that one is handled, a job for the redelivery would have run before it.
    await ingress.enqueue({ i: 'after' }, { eventId: 'ok_after', eventType: 'ok' })
    await eventually('the event queued after the redelivery', () => finished() === 11)
    t.equal(await queue.count(), 0, 'no new job')
    t.equal(await queue.getFailedCount(), 4)
    t.equal(await dead.count(), 4, 'no new dead letter')
  })

  t.test('dead letters are pruned by the sweep only once older than deadAgeSeconds', async (t) => {
    const queueName = 'dead-age'
    const ingress = ingressFor(queueName, { retrySchedule: [] })
    const worker = workerFor(queueName, () => { throw new Error('nope') }, { deadAgeSeconds: 1 })
    await worker.start()
    const { jobId } = await ingress.enqueue({ n: 1 })
    const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
    await eventually('the dead letter', async () => await dead.count() === 1)
    await worker.sweep()
    t.ok(await Job.fromId(dead, deadLetterId(jobId)), 'a young dead letter survives a sweep')
    const keeper = workerFor(queueName, () => {}) // default deadAgeSeconds: 14 days; sweep needs no start
    // Older than deadAgeSeconds by its own timestamp, which the sweep's clean compares with.
    await eventually('the dead letter to be older than 1 s', async () => {
      const letter = await Job.fromId(dead, deadLetterId(jobId))
      return letter !== undefined && Date.now() - letter.timestamp > 1000
    })
    await keeper.sweep()
    t.ok(await Job.fromId(dead, deadLetterId(jobId)), 'the default retention keeps a 1 s old dead letter')
    await worker.sweep()
    t.equal(await Job.fromId(dead, deadLetterId(jobId)), undefined, 'deadAgeSeconds 1 prunes it')
  })

  t.test('a running worker keeps pruning: a dead letter that ages past deadAgeSeconds goes without a call', async (t) => {
    const queueName = 'dead-age-running'
    const ingress = ingressFor(queueName, { retrySchedule: [] })
    const worker = workerFor(queueName, () => { throw new Error('nope') }, { deadAgeSeconds: 1, sweepIntervalMs: 200 })
    await worker.start()
    const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
    const { jobId } = await ingress.enqueue({ n: 1 })
    await eventually('the dead letter', async () => await Job.fromId(dead, deadLetterId(jobId)) !== undefined)
    // Written after start's first sweep: only the periodic sweep can remove it.
    await eventually('the periodic sweep to prune it', async () => await dead.count() === 0)
    t.equal(await Job.fromId(dead, deadLetterId(jobId)), undefined, 'pruned while the worker runs')
    t.ok(worker.running, 'the worker is still running')
  })
})
