/**
 * Replay: a module of its own that starts no worker; a dead letter goes back to the main queue exactly
 * once, with a fresh attempt budget, past the dedupe key its original delivery still holds.
 */
import t from 'tap'
import { Job, Queue } from 'bullmq'
import { setTimeout as sleep } from 'node:timers/promises'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { startTarget } from '../helpers/target.js'
import { chainOn } from '../helpers/chain.js'
import { deadLetterId, type DeadLetterData } from '../../src/worker/dead-letter.js'
import { deadLetterQueueName } from '../../src/queue/open-queues.js'
import type { WebhookJobData } from '../../src/queue/job-data.js'
import type * as ReplayModule from '../../src/worker/replay.js'
import { beforeAll } from '../helpers/before-all.js'
import { eventually } from '../helpers/eventually.js'

const redis = beforeAll(t, async () => await startTarget(), async (redis) => await redis.stop())
const { ingressFor, workerFor, queueFor } = chainOn(t, redis)

const PREFIX = '{anvil}'
/** Loaded in the first test, to show that importing it connects nothing. */
let replay: typeof ReplayModule

async function clientList (): Promise<string[]> {
  return String(await redis.command('client', 'list')).trim().split('\n')
}

/** Jobs of the main queue, in any state, that were replayed from this dead letter. */
async function replaysOf (queue: Queue<WebhookJobData>, deadId: string): Promise<Array<Job<WebhookJobData>>> {
  const jobs = await queue.getJobs(['wait', 'active', 'delayed', 'prioritized', 'completed', 'failed'])
  return jobs.filter((job) => job?.data.replayOf === deadId)
}

/**
 * Enqueues events that fail at once (empty schedule), waits for their dead letters, closes the worker.
 * One job at a time, so the dead letters are written in the order of the events.
 */
async function makeDeadLetters (queueName: string, events: Array<{ eventId: string, eventType?: string }>): Promise<string[]> {
  const ingress = ingressFor(queueName, { retrySchedule: [] })
  const worker = workerFor(queueName, () => { throw new Error('down') }, { concurrency: 1 })
  await worker.start()
  const ids: string[] = []
  for (const event of events) ids.push(deadLetterId((await ingress.enqueue({ ...event }, event)).jobId))
  const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
  await eventually('the dead letters', async () => await dead.count() === events.length)
  await worker.close()
  return ids
}

/** One dead letter in `queueName`, for an event of this id; its id. */
async function oneDeadLetter (queueName: string, eventId: string): Promise<string> {
  const [deadId] = await makeDeadLetters(queueName, [{ eventId }])
  if (deadId === undefined) throw new Error('no dead letter')
  return deadId
}

t.test('importing replay and replaying start no worker', async (t) => {
  const before = await clientList()
  replay = await import('../../src/worker/replay.js')
  t.equal((await clientList()).length, before.length, 'importing the module opens no connection')

  const queueName = 'no-worker'
  const queue = queueFor(queueName)
  // Positive control: a running Anvil worker is visible both ways.
  const worker = workerFor(queueName, () => { throw new Error('down') })
  await worker.start()
  await eventually('the worker to be seen', async () =>
    (await queue.getWorkers()).length > 0 && (await clientList()).some((c) => c.includes('cmd=bzpopmin')))
  const ingress = ingressFor(queueName, { retrySchedule: [] })
  const { jobId } = await ingress.enqueue({ n: 1 })
  const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
  await eventually('the dead letter', async () => await dead.count() === 1)
  await worker.close()
  await eventually('the worker to be gone', async () => (await queue.getWorkers()).length === 0)

  const replayer = replay.createReplayer({ redis: redis.url, queueName })
  t.teardown(() => replayer.close())
  const result = await replayer.replayDeadLetter(deadLetterId(jobId))
  t.equal(result.replayedNow, true)
  await sleep(300)
  t.equal((await queue.getWorkers()).length, 0, 'no worker on the queue')
  t.notOk((await clientList()).some((c) => /cmd=(bzpopmin|bzpopmax|brpoplpush|blmove|xread)/.test(c)), 'no blocking connection')
  t.equal(await (await Job.fromId(queue, result.jobId))?.getState(), 'waiting', 'the replayed job waits: nobody processes it')
})

t.test('10 concurrent replays of one dead letter make one live job', async (t) => {
  const queueName = 'concurrent'
  const deadId = await oneDeadLetter(queueName, 'evt_c')
  const options = { redis: redis.url, queueName }
  const published: unknown[] = []
  const onReplayed = (message: unknown): void => { if ((message as { deadLetterId: string }).deadLetterId === deadId) published.push(message) }
  subscribe('anvil:replay:replayed', onReplayed)
  t.teardown(() => { unsubscribe('anvil:replay:replayed', onReplayed) })
  const results = await Promise.all(Array.from({ length: 10 }, async () => await replay.replayDeadLetter(deadId, options)))
  const jobIds = new Set(results.map((r) => r.jobId))
  t.equal(jobIds.size, 1, 'every replay names the same job')
  t.equal(results.filter((r) => r.replayedNow).length, 1, 'and exactly one of them says it made it')
  t.equal(published.length, 1, 'and is counted: one replayed event')
  const queue = queueFor(queueName)
  t.equal((await replaysOf(queue, deadId)).length, 1, 'one live job')
  t.equal(await queue.count(), 1)

  const later = await replay.replayDeadLetter(deadId, options)
  t.same(later, { deadLetterId: deadId, jobId: [...jobIds][0], replayedNow: false }, 'a later replay returns the same job')
  t.equal((await replaysOf(queue, deadId)).length, 1, 'and makes none')
})

/** Takes the replay's record off the letter, as if the replay had died before writing it; returns what it was. */
async function unmarkLetter (queueName: string, deadId: string): Promise<string | undefined> {
  const letter = await Job.fromId<DeadLetterData>(queueFor<DeadLetterData>(deadLetterQueueName(queueName)), deadId)
  if (letter === undefined) throw new Error('no dead letter')
  const { replayedAs, replayedAt, ...unmarked } = letter.data
  await letter.updateData(unmarked)
  return replayedAs
}

t.test('a replay that stopped after its add, before it marked the letter, is finished by the next one, which did not make it', async (t) => {
  const queueName = 'unmarked'
  const deadId = await oneDeadLetter(queueName, 'evt_u')
  const options = { redis: redis.url, queueName }
  const first = await replay.replayDeadLetter(deadId, options)
  t.equal(first.replayedNow, true)
  // As if the first replay had died after its add and its claim, before it marked the letter.
  t.equal(await unmarkLetter(queueName, deadId), first.jobId)
  const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
  const replayer = replay.createReplayer(options)
  t.teardown(async () => await replayer.close())
  t.same((await replayer.listDeadLetters()).map((l) => l.id), [deadId], 'the letter looks unreplayed')

  t.same(await replay.replayDeadLetter(deadId, options), { deadLetterId: deadId, jobId: first.jobId, replayedNow: false },
    'the next replay finds the job the first one made')
  t.equal((await replaysOf(queueFor(queueName), deadId)).length, 1, 'and makes none')
  t.equal((await Job.fromId<DeadLetterData>(dead, deadId))?.data.replayedAs, first.jobId, 'the letter is marked now')
  t.same(await replayer.listDeadLetters(), [], 'and no longer listed')
})

t.test('a replay that stopped after its add, before its mark, is claimed by the next one, which makes no job', async (t) => {
  const queueName = 'unclaimed'
  const deadId = await oneDeadLetter(queueName, 'evt_n')
  const options = { redis: redis.url, queueName }
  const first = await replay.replayDeadLetter(deadId, options)
  // As if the first replay had died after its add: neither the mark nor the letter's record.
  await unmarkLetter(queueName, deadId)
  t.equal(await redis.command('del', `${PREFIX}:${deadLetterQueueName(queueName)}:replayed:${deadId}`), 1, 'the mark is where the replay sets it')

  t.same(await replay.replayDeadLetter(deadId, options), { deadLetterId: deadId, jobId: first.jobId, replayedNow: true },
    'nobody had said so: the next replay says it replayed the letter')
  t.equal((await replaysOf(queueFor(queueName), deadId)).length, 1, 'with the job the first one made')
})

t.test('a replay bypasses the dedupe key still held by the original, runs with a fresh budget, once', async (t) => {
  const queueName = 'fresh'
  const ingress = ingressFor(queueName, { retrySchedule: [50] })
  const queue = queueFor(queueName)
  const seen: Array<{ id: string, attempt: number, replayOf?: string }> = []
  const worker = workerFor(queueName, (event) => {
    seen.push({ id: event.id, attempt: event.attempt, replayOf: event.replayOf })
    // The original fails both its attempts; the replay fails once more, then succeeds.
    if (event.replayOf === undefined || event.attempt < 2) throw new Error(`fail ${event.attempt}`)
  })
  await worker.start()
  const original = await ingress.enqueue({ id: 'evt_fresh' }, { eventId: 'evt_fresh' })
  const deadId = deadLetterId(original.jobId)
  const dead = queueFor<DeadLetterData>(deadLetterQueueName(queueName))
  await eventually('the dead letter', async () => await Job.fromId(dead, deadId) !== undefined)
  const letter = await Job.fromId<DeadLetterData>(dead, deadId)
  t.equal(letter?.data.failureContext.attempts, 2, 'the original used its whole budget')

  const dedupeKey = `${PREFIX}:${queueName}:de:${letter?.data.job.key ?? ''}`
  t.equal(await redis.command('exists', dedupeKey), 1, 'the original still holds its dedupe key')
  t.same(await ingress.enqueue({ id: 'evt_fresh' }, { eventId: 'evt_fresh' }), { jobId: original.jobId, replayed: true },
    'a redelivery is still a duplicate')

  const result = await replay.replayDeadLetter(deadId, { redis: redis.url, queueName })
  t.match(result, { deadLetterId: deadId, jobId: `r_${deadId}`, replayedNow: true })
  await eventually('the replay to complete', async () => await (await Job.fromId(queue, result.jobId))?.getState() === 'completed')
  const replayed = await Job.fromId<WebhookJobData>(queue, result.jobId)
  t.same(replayed?.data, { ...letter?.data.job, replayOf: deadId }, 'the replay carries the original data')
  t.equal(replayed?.opts.attempts, 2, 'and the attempts of its own schedule')
  t.same(seen.filter((s) => s.replayOf === deadId).map((s) => [s.id, s.attempt]), [[result.jobId, 1], [result.jobId, 2]],
    'the replay starts again from attempt 1')
  const after = await Job.fromId<DeadLetterData>(dead, deadId)
  t.equal(after?.data.replayedAs, result.jobId, 'the dead letter records its replay')
  t.type(after?.data.replayedAt, 'number')

  t.same(await replay.replayDeadLetter(deadId, { redis: redis.url, queueName }),
    { deadLetterId: deadId, jobId: result.jobId, replayedNow: false }, 'replaying again later changes nothing')
  t.same(await ingress.enqueue({ id: 'evt_fresh' }, { eventId: 'evt_fresh' }), { jobId: original.jobId, replayed: true },
    'and the dedupe window still holds for redeliveries')
  t.equal((await replaysOf(queue, deadId)).length, 1)
})

t.test('replayDeadLetters takes a filter and a limit, and skips what was replayed', async (t) => {
  const queueName = 'bulk'
  await makeDeadLetters(queueName, [
    { eventId: 'a1', eventType: 'a' }, { eventId: 'b1', eventType: 'b' }, { eventId: 'a2', eventType: 'a' },
    { eventId: 'a3', eventType: 'a' }, { eventId: 'b2', eventType: 'b' }
  ])
  const options = { redis: redis.url, queueName }
  const typeA = (letter: ReplayModule.DeadLetter): boolean => letter.data.job.eventType === 'a'
  const replayer = replay.createReplayer(options)
  t.teardown(() => replayer.close())
  t.equal((await replayer.listDeadLetters()).length, 5)
  t.same((await replayer.listDeadLetters({ limit: 2 })).map((l) => l.data.job.eventId), ['a1', 'b1'], 'oldest first')

  const first = await replay.replayDeadLetters({ ...options, filter: typeA, limit: 2 })
  t.equal(first.length, 2, 'the limit holds')
  t.ok(first.every((r) => r.replayedNow))
  const eventIdOf = async (r: ReplayModule.ReplayResult): Promise<string | undefined> =>
    (await Job.fromId<WebhookJobData>(queueFor(queueName), r.jobId))?.data.eventId
  t.same(await Promise.all(first.map(eventIdOf)), ['a1', 'a2'], 'only what the filter takes, oldest first')

  const pending = await replayer.listDeadLetters()
  t.same(pending.map((l) => l.data.job.eventId), ['b1', 'a3', 'b2'], 'replayed letters are no longer listed')
  t.equal((await replayer.listDeadLetters({ includeReplayed: true })).length, 5, 'unless asked for')

  const second = await replay.replayDeadLetters({ ...options, filter: typeA })
  t.same(await Promise.all(second.map(eventIdOf)), ['a3'], 'the rest of the filtered ones')
  const rest = await replay.replayDeadLetters(options)
  t.same(await Promise.all(rest.map(eventIdOf)), ['b1', 'b2'], 'no filter: all that are left')
  t.same(await replay.replayDeadLetters(options), [], 'nothing left to replay')
  t.equal(await queueFor(queueName).count(), 5, 'five live jobs, one per dead letter')

  t.same(await replayer.replayDeadLetters({ limit: 0 }), [])
  await t.rejects(replayer.replayDeadLetters({ limit: -1 }), { code: 'ANVIL_ERR_INVALID_OPTIONS' })
  await t.rejects(replayer.replayDeadLetter('d_nope'), { code: 'ANVIL_ERR_DEAD_LETTER_NOT_FOUND' })
})

t.test('createReplayer refuses bad options with one line, before it connects', async (t) => {
  const { createReplayer } = await import('../../src/worker/replay.js')
  for (const [options, pattern] of [
    [{ redis: redis.url, queueName: 'a:b' }, /queueName/],
    [{ redis: redis.url, retention: { deadAgeSeconds: -1 } }, /retention\.deadAgeSeconds/],
    [{ redis: redis.url, retention: { deadAge: 60 } }, /retention\.deadAge/],
    [{ redis: redis.url, queue: 'webhooks' }, /queue/]
  ] as const) {
    t.throws(() => createReplayer(options as never), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: pattern })
  }
  // A partial retention keeps the defaults for the rest.
  const replayer = createReplayer({ redis: redis.url, retention: { completedCount: 5 } })
  await replayer.close()
})
