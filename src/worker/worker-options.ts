/** The options of `createWorker` (and the worker plugin): the schema, whose `Static<>` is their type, and its check. */
import { Type, type Static, type TObject } from '@sinclair/typebox'
import type { RedisInput } from '../redis/connect.js'
import type { Telemetry } from '../queue/telemetry.js'
import { compileCheck, hasMethods } from '../shared/validate.js'
import { Concurrency, ConsoleUrl, InboundQueue, LockDurationMs, MaxClockSkewMs, Opaque, StalledIntervalMs, Whole } from '../shared/schemas.js'
import { JournalOptionsSchema } from '../journal/journal-options.js'
import type { AnvilLogger } from '../shared/logger.js'

/** What the worker does, shared with the worker plugin (which adds `handler` and takes the app's logger). */
export const workerSettings = {
  ...InboundQueue(),
  /** Jobs processed at once (at most 10,000). @defaultValue 10 */
  concurrency: Type.Optional(Concurrency()),
  /** How long `close` waits for active jobs before it forces; those jobs are then recovered as stalled. @defaultValue 10000 */
  shutdownTimeoutMs: Type.Optional(Whole(0)),
  /** How often to dead-letter failed jobs that a crash kept from their `failed` listener; 0 turns it off. @defaultValue 30000 */
  sweepIntervalMs: Type.Optional(Whole(0)),
  /** Dead letters older than this are pruned by the sweep; 0 keeps them. @defaultValue 1209600 (14 days) */
  deadAgeSeconds: Type.Optional(Whole(0)),
  /** BullMQ stall detection: a job whose lock is not renewed for this long (at least 500) is taken back. @defaultValue 30000 (BullMQ's) */
  lockDurationMs: Type.Optional(LockDurationMs()),
  /** How often stalled jobs are looked for (at least 100). @defaultValue 30000 (BullMQ's) */
  stalledIntervalMs: Type.Optional(StalledIntervalMs()),
  /** How often a job may stall before it fails. @defaultValue 1 (BullMQ's) */
  maxStalledCount: Type.Optional(Whole(0)),
  /**
   * A worker whose host clock is off from Redis's by more than this takes no jobs and is not ready until it agrees
   * again (BullMQ schedules retries with each process's clock); checked at start and every minute; 0 turns it off.
   * @defaultValue 5000
   */
  maxClockSkewMs: Type.Optional(MaxClockSkewMs()),
  /**
   * BullMQ telemetry (e.g. `new BullMQOtel()`): a `process` span per attempt, the child of the span that
   * enqueued the job (the webhook's request, when the ingress is traced too). @defaultValue off
   */
  telemetry: Type.Optional(Opaque<Telemetry>()),
  /**
   * The event journal in PostgreSQL: each event's row is written before its handler runs, its outcome after,
   * and the handler's event gets `db`, `once` and `effectKey`. @defaultValue off
   */
  journal: Type.Optional(JournalOptionsSchema),
  /**
   * The console's address (`https://anvil.example.com/admin/console/`), for the link of `inbound.dead_lettered`
   * (sent with `journal`). @defaultValue none: no link
   */
  consoleUrl: Type.Optional(ConsoleUrl())
}

const connectionProperties = {
  /** A Redis URL (Anvil connects and closes) or an ioredis client with `maxRetriesPerRequest: null` (left open). */
  redis: Opaque<RedisInput>(),
  /** Where the worker's lines go. @defaultValue silent */
  logger: Type.Optional(Opaque<AnvilLogger>())
}

export const WorkerOptionsSchema: TObject<typeof connectionProperties & typeof workerSettings> =
  Type.Object({ ...connectionProperties, ...workerSettings }, { additionalProperties: false })

export type WorkerOptions = Static<typeof WorkerOptionsSchema>

const checkData = compileCheck(WorkerOptionsSchema)

/** The first problem with the options as one line (`concurrency: Expected integer to be greater or equal to 1`), or undefined. */
export function checkWorkerOptions (options: WorkerOptions): string | undefined {
  const problem = checkData(options)
  if (problem !== undefined) return problem
  // A pino logger's methods may sit on its prototype, which a schema's object check does not look at.
  if (options.logger !== undefined && !hasMethods(options.logger, ['info', 'warn', 'error'])) {
    return 'logger: must have info, warn and error methods'
  }
  return undefined
}
