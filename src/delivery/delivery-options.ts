/** The options of `createDeliveryWorker`: the schema, whose `Static<>` is their type, and its check. */
import type { lookup } from 'node:dns'
import { Type, type Static } from '@sinclair/typebox'
import type { RedisInput } from '../redis/connect.js'
import { compileCheck, hasMethods } from '../shared/validate.js'
import { Concurrency, LockDurationMs, MAX_RETRY_STEP_MS, MaxClockSkewMs, Opaque, Prefix, QueueName, StalledIntervalMs, Whole } from '../shared/schemas.js'
import { MAX_JITTER } from './delivery-schedule.js'
import type { DeliveryAttempt, DeliveryStore } from './delivery-job.js'
import { netsProblem } from '../send/cidr.js'
import type { AnvilLogger } from '../shared/logger.js'
import type { Telemetry } from '../queue/telemetry.js'

export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000
export const DEFAULT_RESPONSE_CAP_BYTES = 4096
/** How long a 2xx's body may take after its status: the log's copy only, so short. */
export const RESPONSE_BODY_TIMEOUT_MS = 1000
export const DEFAULT_FAILURE_THRESHOLD = 5
export const DEFAULT_CIRCUIT_OPEN_MS = 30_000
/** An endpoint that has only failed for five days is disabled (Svix's 120 h). */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 24 * 3_600_000
/** An endpoint whose oldest delivery in flight is older than this is slow: jobs over its cap are put back. */
export const SLOW_ENDPOINT_AFTER_MS = 500
/** How long a clean circuit read is trusted without asking Redis again. */
export const CIRCUIT_CLEAN_CACHE_MS = 1000

export interface EndpointDisabledEvent { endpointId: string, reason: string }

export const DeliveryWorkerOptionsSchema = Type.Object({
  /** A Redis URL (Anvil connects and closes) or an ioredis client with `maxRetriesPerRequest: null` (left open). */
  redis: Opaque<RedisInput>(),
  /** Secrets in, attempts out: the database's delivery store, or one of your own (forward mode has no database). */
  store: Opaque<DeliveryStore>(),
  /** Must match the dispatcher's. @defaultValue `'outbound'` */
  queueName: Type.Optional(QueueName()),
  /** Must match the dispatcher's. @defaultValue `'{anvil}'` */
  prefix: Type.Optional(Prefix()),
  /** Deliveries in flight at once. @defaultValue 10 */
  concurrency: Type.Optional(Concurrency()),
  /**
   * Deliveries to one endpoint in flight at once in this process, so a hanging endpoint cannot take every
   * slot before its circuit opens. An endpoint earns them while the cap binds: one at first, doubling with each
   * delivery done within 500 ms, one again after a slower one. Set, it is a fixed cap that always binds. Unset, the cap adapts: it binds
   * only within `timeoutMs` of this process having more than one endpoint in flight or entering, or of a
   * delivery taking longer than 500 ms; otherwise the one endpoint gets every slot. The trade-off: a lone
   * endpoint that starts hanging holds every slot until its deliveries time out, so the first job of another
   * endpoint may wait about one `timeoutMs` (set a fixed cap to bound that).
   * @defaultValue adaptive: half of `concurrency`, rounded up, while several endpoints are active or one was slow within `timeoutMs`; all of `concurrency` otherwise
   */
  maxInFlightPerEndpoint: Type.Optional(Whole(1, 10_000)),
  /** One POST, connection to last byte read, gives up after this long. @defaultValue 10000 */
  timeoutMs: Type.Optional(Whole(1, 300_000)),
  /** Bytes of each answer read; the rest is never read, and the delivery log keeps at most the first 4096. @defaultValue 4096 */
  responseCapBytes: Type.Optional(Whole(0, 1_048_576)),
  /** Each retry delay is moved by up to this fraction either way. @defaultValue 0.2 */
  jitter: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_JITTER })),
  /** The longest a receiver's `Retry-After` may push a retry back. @defaultValue 3600000 (an hour) */
  retryAfterMaxMs: Type.Optional(Whole(0, MAX_RETRY_STEP_MS)),
  /** Networks reachable despite the SSRF guard, as `ANVIL_OUTBOUND_ALLOW_NETS` (`127.0.0.0/8,10.0.0.0/8`). @defaultValue none */
  allowNets: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  /** Refuse plain http endpoints. @defaultValue false */
  httpsOnly: Type.Optional(Type.Boolean()),
  /** The circuit breaker per endpoint; `false` turns it off. @defaultValue `{ failureThreshold: 5, openMs: 30000 }` */
  circuit: Type.Optional(Type.Union([Type.Literal(false), Type.Object({
    /** Consecutive failures that open it. @defaultValue 5 */
    failureThreshold: Type.Optional(Whole(1)),
    /** How long it stays open before a probe. @defaultValue 30000 */
    openMs: Type.Optional(Whole(1, MAX_RETRY_STEP_MS))
  }, { additionalProperties: false })])),
  /** An endpoint that has only failed for this long is disabled; 0 never. @defaultValue 432000000 (5 days) */
  disableAfterMs: Type.Optional(Whole(0)),
  /** Called once when an endpoint is disabled (410, or only failures for `disableAfterMs`). @defaultValue none */
  onEndpointDisabled: Type.Optional(Opaque<(event: EndpointDisabledEvent) => void>()),
  /** Called after every attempt, recorded or not. @defaultValue none */
  onAttempt: Type.Optional(Opaque<(attempt: DeliveryAttempt) => void>()),
  /** A delivery whose lock is not renewed for this long (its worker died; at least 500) is taken back, and counts as a failed attempt. @defaultValue 30000 (BullMQ's) */
  lockDurationMs: Type.Optional(LockDurationMs()),
  /** How often deliveries whose lock expired are looked for (at least 100). @defaultValue 30000 (BullMQ's) */
  stalledIntervalMs: Type.Optional(StalledIntervalMs()),
  /**
   * A delivery worker whose host clock is off from Redis's by more than this takes no jobs and is not ready until it
   * agrees again (its retries would fire early or late); checked at start and every minute; 0 turns it off. @defaultValue 5000
   */
  maxClockSkewMs: Type.Optional(MaxClockSkewMs()),
  /** How long `close` waits for deliveries in flight. @defaultValue 10000 */
  shutdownTimeoutMs: Type.Optional(Whole(0)),
  /** Name resolution for endpoints (the guard checks what it returns). @defaultValue `dns.lookup` */
  lookup: Type.Optional(Opaque<typeof lookup>()),
  /**
   * BullMQ telemetry (e.g. `new BullMQOtel()`): an `attempt <type>` span (kind CLIENT) per POST of a traced message,
   * the child of its dispatch, and its context sent as the receiver's `traceparent`. Without it, the job's trace
   * context is sent as the message got it. @defaultValue off
   */
  telemetry: Type.Optional(Opaque<Telemetry>()),
  /** Where the worker's lines go. @defaultValue silent */
  logger: Type.Optional(Opaque<AnvilLogger>())
}, { additionalProperties: false })

export type DeliveryWorkerOptions = Static<typeof DeliveryWorkerOptionsSchema>

const checkData = compileCheck(DeliveryWorkerOptionsSchema)
const FUNCTIONS = ['onEndpointDisabled', 'onAttempt', 'lookup'] as const

/** The first problem with the options as one line, or undefined. */
export function checkDeliveryWorkerOptions (options: DeliveryWorkerOptions): string | undefined {
  const problem = checkData(options)
  if (problem !== undefined) return problem
  if (!hasMethods(options.store, ['loadSecrets'])) return 'store: must have a loadSecrets(endpointId) method'
  for (const name of FUNCTIONS) {
    if (options[name] !== undefined && typeof options[name] !== 'function') return `${name}: must be a function`
  }
  if (options.allowNets !== undefined) {
    const nets = netsProblem(options.allowNets)
    if (nets !== undefined) return `allowNets: ${nets}`
  }
  if (options.logger !== undefined && !hasMethods(options.logger, ['info', 'warn', 'error'])) {
    return 'logger: must have info, warn and error methods'
  }
  return undefined
}
