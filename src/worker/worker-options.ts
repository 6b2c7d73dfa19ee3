/** The options of `createWorker` (and the worker plugin): the interface and its check. */
import { Type } from '@sinclair/typebox'
import type { RedisInput } from '../redis/connect.js'
import type { Telemetry } from '../queue/telemetry.js'
import { compileCheck, hasMethods } from '../shared/validate.js'
import { Prefix, QueueName, Whole } from '../shared/schemas.js'

/** The subset of a logger Anvil calls; pino and Fastify's logger fit. */
export interface AnvilLogger {
  /** Optional, for loggers written before it was used: the worker's per-job start line. */
  debug? (obj: object, msg?: string): void
  info (obj: object, msg?: string): void
  warn (obj: object, msg?: string): void
  error (obj: object, msg?: string): void
}

export interface WorkerOptions {
  redis: RedisInput
  queueName?: string
  prefix?: string
  concurrency?: number
  /** How long `close` waits for active jobs before it forces; those jobs are then recovered as stalled. */
  shutdownTimeoutMs?: number
  /** How often to dead-letter failed jobs that a crash kept from their `failed` listener. 0 turns it off. */
  sweepIntervalMs?: number
  /** Dead letters older than this are pruned by the sweep; 0 keeps them. */
  deadAgeSeconds?: number
  /** BullMQ stall detection: a job whose lock is not renewed for this long is taken back. */
  lockDurationMs?: number
  stalledIntervalMs?: number
  maxStalledCount?: number
  logger?: AnvilLogger
  /**
   * BullMQ telemetry (e.g. `new BullMQOtel()`): a `process` span per attempt, the child of the span that
   * enqueued the job (the webhook's request, when the ingress is traced too).
   */
  telemetry?: Telemetry
}


/** The plain-data part; `redis`, `logger` and `telemetry` are checked where they are used. Unknown keys are refused. */
const WorkerData = Type.Object({
  redis: Type.Unknown(),
  queueName: Type.Optional(QueueName()),
  prefix: Type.Optional(Prefix()),
  concurrency: Type.Optional(Whole(1)),
  shutdownTimeoutMs: Type.Optional(Whole(0)),
  sweepIntervalMs: Type.Optional(Whole(0)),
  deadAgeSeconds: Type.Optional(Whole(0)),
  lockDurationMs: Type.Optional(Whole(1)),
  stalledIntervalMs: Type.Optional(Whole(1)),
  maxStalledCount: Type.Optional(Whole(0)),
  logger: Type.Optional(Type.Unknown()),
  telemetry: Type.Optional(Type.Unknown())
}, { additionalProperties: false })

const checkData = compileCheck(WorkerData)

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
