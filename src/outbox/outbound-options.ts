import type { JobsOptions } from 'bullmq'
import { Type, type Static } from '@sinclair/typebox'
import type { DatabaseInput } from '../db/database.js'
import type { RedisInput } from '../redis/connect.js'
import type { EventTypeMap, EventTypes } from '../catalog/event-types.js'
import { ConsoleUrl, Opaque, Prefix, QueueName, RetentionDays, SchemaName, Whole } from '../shared/schemas.js'
import { RetryScheduleSettingSchema } from '../delivery/delivery-schedule.js'
import { EventType } from '../endpoints/endpoint-schemas.js'
import type { AnvilLogger } from '../shared/logger.js'
import type { Telemetry } from '../queue/telemetry.js'

/** Defaults, named once. */
export const DEFAULT_DISPATCH_POLL_MS = 2000
export const DEFAULT_DISPATCH_BUSY_POLL_MS = 20
export const DEFAULT_NOTIFY_INTERVAL_MS = 50
export const DEFAULT_DISPATCH_LEASE_MS = 60_000
export const DEFAULT_DISPATCH_BATCH = 100
/** UseDeploy's dispatch backoff: 30 s, 1 m, 2 m … capped at 15 m, failed after 8 attempts. */
export const DEFAULT_DISPATCH_RETRY = Object.freeze({ baseMs: 30_000, maxMs: 15 * 60_000, attempts: 8 })
/**
 * A completed delivery job is kept (its body stripped, src/delivery/delivery-worker.ts) so its id dedupes a
 * second fan-out of its message: a day, and at most 100,000 of them, which covers a dispatch lease (60 s) up
 * to about 1,600 deliveries/s.
 */
export const DEFAULT_DELIVERY_RETENTION: JobsOptions = Object.freeze({
  removeOnComplete: { age: 24 * 60 * 60, count: 100_000 },
  removeOnFail: { age: 7 * 24 * 60 * 60 }
})
export const MAX_PAYLOAD_LIMIT = 16 * 1024 * 1024
/** Finished messages idle this long go, and the delivery log's days as old (src/outbox/outbox-retention.ts). */
export const DEFAULT_OUTBOX_RETENTION_DAYS = 30
/** How often the process that dispatches deletes them. */
export const DEFAULT_OUTBOX_RETENTION_INTERVAL_MS = 60 * 60 * 1000

export const DispatchOptionsSchema = Type.Object({
  /** The backstop poll, for a NOTIFY missed while the listener reconnected. @defaultValue 2000 */
  pollIntervalMs: Type.Optional(Whole(10)),
  /** After a pass that found work, the next pass comes this soon, until one finds none. @defaultValue 20 */
  busyPollMs: Type.Optional(Whole(1)),
  /** How long a claim holds a message; a dispatcher that died lets go when it ends. @defaultValue 60000 */
  leaseMs: Type.Optional(Whole(100)),
  /** Messages claimed at once, and fanned out at once by one process (a claim does not wait for the fan-outs under way). @defaultValue 100 */
  batchSize: Type.Optional(Whole(1, 10_000)),
  /** The first retry's delay after a failed dispatch; doubled each time. @defaultValue 30000 */
  retryBaseMs: Type.Optional(Whole(1)),
  /** The longest retry delay. @defaultValue 900000 (15 minutes) */
  retryMaxMs: Type.Optional(Whole(1)),
  /** Failed dispatches after which a message is `failed`. @defaultValue 8 */
  attempts: Type.Optional(Whole(1, 1000))
}, { additionalProperties: false })

export const OutboundOptionsSchema = Type.Object({
  /** A postgres:// URL (Anvil opens and closes a pool) or a `pg.Pool` (left open). */
  database: Opaque<DatabaseInput>(),
  /** A Redis URL or an ioredis client (left open). @defaultValue `'redis://127.0.0.1:6379'` */
  redis: Type.Optional(Opaque<RedisInput>()),
  /** The PostgreSQL schema of Anvil's tables. @defaultValue `'anvil'` */
  schema: Type.Optional(SchemaName()),
  /** BullMQ key prefix. @defaultValue `'{anvil}'` */
  prefix: Type.Optional(Prefix()),
  /** The delivery queue. @defaultValue `'outbound'` */
  queueName: Type.Optional(QueueName()),
  /** The largest `data`, as JSON bytes. @defaultValue 262144 (256 KiB) */
  maxPayloadBytes: Type.Optional(Whole(1, MAX_PAYLOAD_LIMIT)),
  /** Internal event name → public name; an internal name missing here is never delivered. @defaultValue none (names are public as they are) */
  eventMap: Type.Optional(Type.Record(Type.String(), EventType())),
  /** Event types defined in code (`defineEventTypes`), beside those stored through `/admin/event-types`. @defaultValue none */
  eventTypes: Type.Optional(Opaque<Pick<EventTypes<EventTypeMap>, 'schemas'>>()),
  /** Refuse to publish a type the event-type catalog does not hold. @defaultValue false */
  strict: Type.Optional(Type.Boolean()),
  /** The largest JSON Schema `PUT /admin/event-types/:name` stores, as JSON bytes. @defaultValue 131072 (128 KiB) */
  maxSchemaBytes: Type.Optional(Whole(1024, MAX_PAYLOAD_LIMIT)),
  /** The deepest nesting of objects and arrays in such a schema. @defaultValue 64 */
  maxSchemaDepth: Type.Optional(Whole(4, 1000)),
  /**
   * How long checking one message's data against its type's schema (on a worker thread, never on the event
   * loop) may take; past it the publish is refused with `ANVIL_ERR_SCHEMA_TOO_SLOW`. @defaultValue 1000
   */
  schemaCheckTimeoutMs: Type.Optional(Whole(10, 600_000)),
  /**
   * At most one NOTIFY per this many ms from a process's publishes (PostgreSQL serializes the commits of
   * notifying transactions); 0: one with every message. @defaultValue 50
   */
  notifyIntervalMs: Type.Optional(Whole(0, 60_000)),
  /** Refuse endpoint URLs that are not https. @defaultValue false */
  httpsOnly: Type.Optional(Type.Boolean()),
  /** How long a rotated-out secret keeps signing. @defaultValue 86400 (24 h) */
  secretGraceSeconds: Type.Optional(Whole(0, 7 * 24 * 60 * 60)),
  /** How long a process reuses an endpoint's secrets. @defaultValue 5000 */
  secretCacheMs: Type.Optional(Whole(0)),
  /** @defaultValue every field's default */
  dispatch: Type.Optional(DispatchOptionsSchema),
  /**
   * Dispatched and failed messages are deleted once nothing has happened to them (dispatch, an attempt, a re-send)
   * for this many days, and never sooner than seven days (the longest a retry waits, plus the time a failing
   * endpoint's jobs may wait before it is disabled); pending ones never are. The delivery log keeps as many days
   * (at least seven): a day older than that is dropped whole. 0 keeps everything. @defaultValue 30
   */
  retentionDays: Type.Optional(RetentionDays()),
  /** How often the process that dispatches deletes them and makes the log's days ahead; 0 never (another process does). @defaultValue 3600000 (an hour) */
  retentionIntervalMs: Type.Optional(Whole(0)),
  /**
   * The delivery retries: `'standard-webhooks'`, delays in ms after the first try, or `{ attempts, exponentialMs }`.
   * Each delivery job carries them, and the delivery worker retries it on them. @defaultValue `'standard-webhooks'`
   */
  retrySchedule: Type.Optional(RetryScheduleSettingSchema),
  /**
   * More BullMQ options for each delivery job, over the schedule's and the retention. Options that would break the
   * dedupe of delivery jobs are refused at start (src/outbox/delivery-job-options.ts): `jobId`, `deduplication`,
   * `parent`, `repeat`, and a `removeOnComplete` or `removeOnFail` that keeps finished jobs shorter than the dispatch
   * window or fewer than 100,000. @defaultValue none
   */
  deliveryJobOptions: Type.Optional(Opaque<JobsOptions>()),
  /**
   * The console's address (`https://anvil.example.com/admin/console/`): operational events link into it for the
   * operator. @defaultValue none: they carry no such link
   */
  consoleUrl: Type.Optional(ConsoleUrl()),
  /**
   * The tenant portal page's address (`https://anvil.example.com/admin/portal/`: `anvilAdmin`'s `portal.publicUrl`
   * and its prefix): a tenant's endpoint gets its own operational events with a link into it, never the console's.
   * @defaultValue none: they carry no link
   */
  portalUrl: Type.Optional(ConsoleUrl()),
  /**
   * BullMQ telemetry (e.g. `new BullMQOtel()`): a `publish <type>` span per message, in the active trace or the
   * `traceparent` given, and a `dispatch <type>` span, whose W3C context each delivery carries to its receiver
   * (docs/outgoing-webhooks.md, "Trace context"). Without it a `traceparent` given to publish is carried as it is.
   * @defaultValue off
   */
  telemetry: Type.Optional(Opaque<Telemetry>()),
  /**
   * Keys that encrypt what endpoints keep for their receivers at rest (AES-256-GCM): client-certificate keys and
   * OAuth client secrets (refused without a key), signing secrets and keys, and custom header values (stored as
   * given without a key, and read either way). Each 32 bytes as 64 hex digits or base64; a list (or one string,
   * comma-separated) rotates them: the first encrypts, every one decrypts. @defaultValue none
   */
  encryptionKey: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })])),
  /** @defaultValue silent */
  logger: Type.Optional(Opaque<AnvilLogger>())
}, { additionalProperties: false })

export type OutboundOptions = Static<typeof OutboundOptionsSchema>
