import { Queue } from 'bullmq'
import type pg from 'pg'
import { openDatabase, type Database } from '../db/database.js'
import { connect, disconnect } from '../redis/connect.js'
import { redisGate } from '../redis/redis-outage.js'
import { DEFAULT_PREFIX, DEFAULT_REDIS_URL } from '../shared/constants.js'
import { every, type Repeating } from '../time/every.js'
import { compileCheck, throwInvalid } from '../shared/validate.js'
import * as outboxSql from '../sql/outbox.js'
import { createDeliveryLog, type DeliveryLog } from '../delivery-log/delivery-log.js'
import { createDeliveryStore, type DatabaseDeliveryStore } from '../delivery-log/delivery-store.js'
import { createDispatcher, type Dispatcher } from './dispatcher.js'
import { createEndpointStore, type EndpointStore } from '../endpoints/endpoint-store.js'
import { createFairOrder } from '../delivery/fair-order.js'
import { createFanOut, type FanOut } from './fan-out.js'
import { createOrdering } from './ordering.js'
import { claimOrRefuse, deploymentIdOf, redisLabel } from '../queue/deployment.js'
import { deliveryJobOptionsProblem, dispatchWindowSeconds } from './delivery-job-options.js'
import { createOperationalEndpoints, type OperationalEndpoints } from '../endpoints/operational-endpoints.js'
import { DEFAULT_OUTBOUND_QUEUE_NAME, type OutboundJobData } from '../delivery/delivery-job.js'
import { deliveryJobOptions, resolveSchedule } from '../delivery/delivery-schedule.js'
import {
  DEFAULT_DELIVERY_RETENTION, DEFAULT_DISPATCH_BATCH, DEFAULT_DISPATCH_BUSY_POLL_MS, DEFAULT_NOTIFY_INTERVAL_MS, DEFAULT_DISPATCH_LEASE_MS, DEFAULT_DISPATCH_POLL_MS, DEFAULT_DISPATCH_RETRY,
  DEFAULT_OUTBOX_RETENTION_DAYS, DEFAULT_OUTBOX_RETENTION_INTERVAL_MS, OutboundOptionsSchema, type OutboundOptions
} from './outbound-options.js'
import { createEventTypeCatalog, type EventTypeCatalog } from '../catalog/event-types.js'
import { deleteIdleMessages, type OutboxPruned } from './outbox-retention.js'
import { createPublisher, DEFAULT_MAX_PAYLOAD_BYTES, type Publish } from './publish.js'
import { createResender, handJobs, type Resender } from '../resend/resender.js'
import { silentLogger, type AnvilLogger } from '../shared/logger.js'
import { createOutboundErasure, type OutboundErasure } from '../erasure/outbound-erasure.js'
import { checkTelemetry } from '../queue/telemetry.js'
import { encryptionKeyProblem, encryptionKeys } from '../at-rest/encryption-keys.js'

export interface OutboxStats {
  pending: number
  failed: number
  /** Age of the oldest pending message; 0 when none is pending. */
  oldestPendingSeconds: number
}

/** The outgoing-webhook service of `createOutbound` and `app.anvilOutbound`: what an app may call. */
export interface Outbound {
  readonly endpoints: EndpointStore
  /** The operator's endpoints for operational events (src/endpoints/operational-events.ts). */
  readonly operationalEndpoints: OperationalEndpoints
  readonly deliveries: DeliveryLog
  readonly dispatcher: Dispatcher
  readonly resend: Resender
  /** The event-type catalog: types from code and from `/admin/event-types`, which publish checks data against. */
  readonly eventTypes: EventTypeCatalog
  /** Erasure by data subject and removal of a tenant (src/erasure/); the admin API's `DELETE /subjects/:subject` and `/tenants/:tenant` audit them. */
  readonly erasure: OutboundErasure
  publish: Publish
  outboxStats (): Promise<OutboxStats>
  /** One retention pass now (`retentionDays`; src/outbox/outbox-retention.ts): what it deleted. */
  prune (): Promise<OutboxPruned>
  /** Prunes now and every `retentionIntervalMs` until closed; the process that dispatches calls it. */
  startRetention (): void
  /** Stops the dispatcher, closes the queue, and the pool and Redis connection Anvil opened. */
  close (): Promise<void>
}

/**
 * What Anvil's own processes take from a service besides its API: its pool (migrations, the portal), its queue and
 * the delivery worker's store (`anvil worker`). Kept off `Outbound`, so none of them is API.
 */
export interface OutboundInternals {
  readonly database: Database
  readonly queue: Queue<OutboundJobData>
  /** For the delivery worker: secrets, the attempt log, disabling (the contract of src/delivery/delivery-job.ts). */
  readonly store: DatabaseDeliveryStore
}

/** A symbol, not a WeakMap: the internals are found through a proxy of the service too (the tests' `beforeAll` values). */
const INTERNALS = Symbol('anvil outbound internals')

/** The internals of a service `createOutbound` made. */
export function outboundInternals (outbound: Outbound): OutboundInternals {
  const found = (outbound as Outbound & { [INTERNALS]?: OutboundInternals })[INTERNALS]
  if (found === undefined) throw new TypeError('not an outgoing-webhook service made by createOutbound')
  return found
}

const checkOptions = compileCheck(OutboundOptionsSchema)
/** How long the dispatcher's start waits for Redis to claim the delivery queue before it goes on without. */
const CLAIM_WAIT_MS = 5000

/** Outgoing webhooks' database side: endpoints, publish, dispatch, the delivery log, operators' re-sends. */
export function createOutbound (options: OutboundOptions): Outbound {
  throwInvalid(checkOptions(options), 'outbound ')
  const telemetry = checkTelemetry(options.telemetry)
  const dispatch = options.dispatch ?? {}
  const leaseMs = dispatch.leaseMs ?? DEFAULT_DISPATCH_LEASE_MS
  const retry = {
    baseMs: dispatch.retryBaseMs ?? DEFAULT_DISPATCH_RETRY.baseMs,
    maxMs: dispatch.retryMaxMs ?? DEFAULT_DISPATCH_RETRY.maxMs,
    attempts: dispatch.attempts ?? DEFAULT_DISPATCH_RETRY.attempts
  }
  throwInvalid(deliveryJobOptionsProblem(options.deliveryJobOptions, dispatchWindowSeconds(leaseMs, retry)), 'outbound ')
  throwInvalid(encryptionKeyProblem(options.encryptionKey), 'outbound ')
  const keys = encryptionKeys(options.encryptionKey)
  const database = openDatabase(options.database, options.schema === undefined ? {} : { schema: options.schema })
  const logger = options.logger ?? silentLogger
  const connection = connect(options.redis ?? DEFAULT_REDIS_URL, 'producer', (err) => logger.warn({ err: err.message }, 'anvil outbound: Redis error'))
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const queue = new Queue<OutboundJobData>(options.queueName ?? DEFAULT_OUTBOUND_QUEUE_NAME, { connection: connection.client, prefix })
  queue.on('error', (err) => logger.warn({ err: err.message }, 'anvil outbound: queue error'))
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES
  const store = createDeliveryStore(database, { secretCacheMs: options.secretCacheMs, consoleUrl: options.consoleUrl, portalUrl: options.portalUrl, keys })
  const rawEndpoints = createEndpointStore(database, {
    httpsOnly: options.httpsOnly ?? false,
    keys,
    ...(options.eventMap === undefined ? {} : { knownTypes: new Set(Object.values(options.eventMap)) })
  })
  // Edits made in this process reach its secret cache at once; other processes see them within secretCacheMs.
  const endpoints: EndpointStore = {
    ...rawEndpoints,
    async update (id, patch) { store.forget(id); return await rawEndpoints.update(id, patch) },
    async remove (id) { store.forget(id); await rawEndpoints.remove(id) },
    async rotateSecret (id, grace = options.secretGraceSeconds) { store.forget(id); return await rawEndpoints.rotateSecret(id, grace) }
  }
  // The delivery queue is this database's deployment's: nothing is added to another deployment's (src/queue/deployment.ts).
  let claim: Promise<void> | undefined
  let claimHeld = false
  async function claimQueue (client?: pg.ClientBase): Promise<void> {
    claim ??= (async () => await claimOrRefuse(connection.client, {
      prefix, queues: [queue.name], deployment: await deploymentIdOf(database, client), redisLabel: redisLabel(options.redis ?? DEFAULT_REDIS_URL)
    }))()
    // Only a claim that held is kept: a refusal or an outage is asked again next time.
    await claim.catch((err: unknown) => { claim = undefined; throw err })
    claimHeld = true
  }
  const schedule = resolveSchedule(options.retrySchedule)
  const addJobs = createFanOut(database, queue, {
    ...deliveryJobOptions(schedule),
    ...DEFAULT_DELIVERY_RETENTION,
    ...options.deliveryJobOptions
  }, schedule, createFairOrder(connection.client, queue))
  const fanOut: FanOut = async (message, target) => {
    await claimQueue(target?.client)
    return await addJobs(message, target)
  }
  const gate = redisGate(connection.client)
  const dispatching = createDispatcher(database, fanOut, {
    pollIntervalMs: dispatch.pollIntervalMs ?? DEFAULT_DISPATCH_POLL_MS,
    busyPollMs: dispatch.busyPollMs ?? DEFAULT_DISPATCH_BUSY_POLL_MS,
    leaseMs,
    batchSize: dispatch.batchSize ?? DEFAULT_DISPATCH_BATCH,
    retry,
    ...(telemetry === undefined ? {} : { telemetry })
  }, logger, gate, createOrdering(database, fanOut, store.releaseOrdered, logger))
  // Refused at start, as the CLI refuses, when another deployment owns the queue.
  // A connection still opening is waited for a while; with Redis away the start goes on, and the first fan-out claims.
  // Once the claim held there is nothing to wait for: a pass waits for Redis itself, up to one poll.
  const claimUnlessAway = async (): Promise<void> => {
    if (claimHeld) return
    if (!await gate.untilReady(CLAIM_WAIT_MS)) return
    await claimQueue().catch((err: unknown) => { if (!gate.outage(err)) throw err })
  }
  const dispatcher: Dispatcher = {
    ...dispatching,
    async start () { await claimUnlessAway(); await dispatching.start() },
    async dispatchOnce () { await claimUnlessAway(); return await dispatching.dispatchOnce() }
  }
  const deliveries = createDeliveryLog(database)
  const eventTypes = createEventTypeCatalog(database, {
    code: options.eventTypes?.schemas ?? {},
    strict: options.strict ?? false,
    ...(options.maxSchemaBytes === undefined ? {} : { maxSchemaBytes: options.maxSchemaBytes }),
    ...(options.maxSchemaDepth === undefined ? {} : { maxSchemaDepth: options.maxSchemaDepth }),
    ...(options.schemaCheckTimeoutMs === undefined ? {} : { checkTimeoutMs: options.schemaCheckTimeoutMs })
  })
  const retentionDays = options.retentionDays ?? DEFAULT_OUTBOX_RETENTION_DAYS
  // With a retention of 0 the pass still runs: it makes the delivery log's days ahead.
  const retentionIntervalMs = options.retentionIntervalMs ?? DEFAULT_OUTBOX_RETENTION_INTERVAL_MS
  let pruner: Repeating | undefined
  let closed = false

  async function prune (): Promise<OutboxPruned> {
    const pruned = await deleteIdleMessages(database, retentionDays)
    if (pruned.messages + pruned.days.length + pruned.deliveries > 0) logger.info(pruned, 'anvil outbound: retention deleted idle messages and their delivery log')
    return pruned
  }

  const outbound: Outbound = {
    endpoints,
    operationalEndpoints: createOperationalEndpoints(database, endpoints),
    deliveries,
    dispatcher,
    resend: createResender({ db: database, queue, fanOut, log: deliveries, endpoints, redis: gate, client: connection.client, maxPayloadBytes,
      checkData: async (type, json, strict) => await eventTypes.checkJson(type, json, database.pool, strict)
    }),
    eventTypes,
    erasure: createOutboundErasure(database, queue, connection.client, handJobs(connection.client, queue)),
    publish: createPublisher(database, {
      maxPayloadBytes, notifyIntervalMs: options.notifyIntervalMs ?? DEFAULT_NOTIFY_INTERVAL_MS, checkData: eventTypes.checkJson, ...(options.eventMap === undefined ? {} : { eventMap: options.eventMap }),
      ...(telemetry === undefined ? {} : { telemetry })
    }),
    async outboxStats () {
      const { rows } = await database.pool.query<{ pending: number, failed: number, oldest: number | null }>(outboxSql.stats(database.schema))
      const row = rows[0]
      return { pending: row?.pending ?? 0, failed: row?.failed ?? 0, oldestPendingSeconds: row?.oldest ?? 0 }
    },
    prune,
    startRetention () {
      if (pruner !== undefined || closed || retentionIntervalMs === 0) return
      const failed = (err: Error): void => logger.warn({ err: err.message }, 'anvil outbound: retention failed; the next pass tries again')
      // A pass at start too: a process restarted more often than the interval would otherwise never prune.
      pruner = every(retentionIntervalMs, prune, failed, { immediate: true })
    },
    async close () {
      closed = true
      void pruner?.stop()
      await dispatcher.close()
      await queue.close()
      await eventTypes.close()
      await disconnect(connection)
      await database.close()
    }
  }
  Object.defineProperty(outbound, INTERNALS, { value: { database, queue, store } satisfies OutboundInternals })
  return outbound
}
