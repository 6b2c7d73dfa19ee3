/** `createWorker`, `WebhookEvent` and the replayer (`@anvil/fastify/replay`), through the package's own name. */
import { Redis } from 'ioredis'
import { createWorker, UnrecoverableError, type AnvilWorker, type WebhookEvent, type WorkerOptions } from '@anvil/fastify'
import { createReplayer, replayDeadLetters, type DeadLetter, type ReplayOptions, type ReplayResult, type Replayer } from '@anvil/fastify/replay'
import { expectType } from './assert.js'

const worker = createWorker(async (event) => {
  expectType<string>()(event.id)
  expectType<string>()(event.source)
  expectType<string | undefined>()(event.eventType)
  expectType<Buffer>()(event.payload)
  expectType<Readonly<Record<string, string>>>()(event.headers)
  expectType<Date>()(event.receivedAt)
  expectType<number>()(event.attempt)
  expectType<{ total: number }>()(event.json<{ total: number }>())
  expectType<unknown>()(event.json())
  // @ts-expect-error the payload is the bytes as received
  event.payload = 'text'
  // @ts-expect-error no such field
  void event.body
  if (event.eventType === 'bad') throw new UnrecoverableError('no retry')
}, { redis: new Redis({ maxRetriesPerRequest: null }), concurrency: 2, logger: console })
expectType<AnvilWorker>()(worker)
expectType<Promise<void>>()(worker.start())

createWorker(() => {}, { redis: 'redis://127.0.0.1:6379' })
// @ts-expect-error redis is required
createWorker(() => {}, { concurrency: 2 })
// @ts-expect-error an unknown option
createWorker(() => {}, { redis: 'redis://127.0.0.1:6379', concurency: 2 })
// @ts-expect-error concurrency is a number
createWorker(() => {}, { redis: 'redis://127.0.0.1:6379', concurrency: '2' })
// @ts-expect-error a logger has info, warn and error
createWorker(() => {}, { redis: 'redis://127.0.0.1:6379', logger: { info () {} } })
// @ts-expect-error a handler takes a WebhookEvent
createWorker((event: number) => event, { redis: 'redis://127.0.0.1:6379' })
expectType<number | undefined>()(({} as WorkerOptions).sweepIntervalMs)

const handler = (event: WebhookEvent): void => { void event.requestId }
createWorker(handler, { redis: 'redis://127.0.0.1:6379' })

const replayer = createReplayer({ redis: 'redis://127.0.0.1:6379', queueName: 'orders', retention: { deadAgeSeconds: 0 } })
expectType<Replayer>()(replayer)
expectType<Promise<ReplayResult>>()(replayer.replayDeadLetter('d_e_1'))
expectType<Promise<ReplayResult[]>>()(replayer.replayDeadLetters({ limit: 10, filter: (letter) => letter.data.job.eventType === 'x' }))
expectType<Promise<DeadLetter[]>>()(replayer.listDeadLetters({ includeReplayed: true }))
expectType<Promise<ReplayResult[]>>()(replayDeadLetters({ redis: 'redis://127.0.0.1:6379', limit: 5 }))
// @ts-expect-error an unknown option
createReplayer({ redis: 'redis://127.0.0.1:6379', queue: 'orders' })
// @ts-expect-error redis is required
createReplayer({ queueName: 'orders' })
// @ts-expect-error a filter is given a dead letter
void replayer.replayDeadLetters({ filter: (id: number) => id > 0 })
expectType<boolean>()(({} as ReplayResult).replayedNow)
expectType<{ completedAgeSeconds?: number, completedCount?: number, failedAgeSeconds?: number, failedCount?: number, deadAgeSeconds?: number } | undefined>()(({} as ReplayOptions).retention)

// The journal: `journal: { database }` (a URL or a pg.Pool) gives the handler `db`, `once` and `effectKey`.
createWorker(async (event) => {
  const charge = await event.once?.('charge', async () => ({ id: 'ch_1', amount: 100 }))
  expectType<{ id: string, amount: number } | undefined>()(charge)
  expectType<string | undefined>()(event.effectKey?.('refund'))
  await event.db?.query('SELECT 1')
}, { redis: 'redis://127.0.0.1:6379', journal: { database: 'postgres://127.0.0.1/app', retentionDays: 7, synchronousCommit: true } })
// @ts-expect-error an unknown journal option
createWorker(() => {}, { redis: 'redis://127.0.0.1:6379', journal: { database: 'postgres://127.0.0.1/app', retention: 7 } })
// @ts-expect-error the journal needs its database
createWorker(() => {}, { redis: 'redis://127.0.0.1:6379', journal: { retentionDays: 7 } })
