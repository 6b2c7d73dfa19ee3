import type { IncomingHttpHeaders } from 'node:http'
import { noteEnqueued, publish } from '../shared/diagnostics.js'
import { errors } from '../shared/errors.js'
import { eventIdKey, payloadKey } from './idempotency.js'
import { lazyJson } from '../shared/json.js'
import { storedHeaders } from './stored-headers.js'
import { isRequestId, REQUEST_ID_RULE } from './request-id.js'
import { WebhookQueue, type EnqueueInput, type EnqueueResult } from '../queue/webhook-queue.js'
import { PgEventQueue } from '../queue/pg-event-queue.js'
import type { ResolvedIngress, ResolvedSource } from './ingress-options.js'
import type { Handshake, RequestInfo, VerifiedEvent } from '../signing/signature-scheme.js'

export interface AcceptRequest extends RequestInfo {
  /** The source's name; default the first source. */
  source?: string
  /** The HTTP request's id, stored on the job for the worker's log lines; dropped unless it is a plain short id. */
  requestId?: string
}

/** One event of a batch and what became of it. */
export interface AcceptedEvent extends EnqueueResult {
  eventId?: string
}

/**
 * A batch (SendGrid), answered once every event is in Redis: `jobs` in the body's order. `jobId` is the
 * first event's, `replayed` is true only when every event was already enqueued; both are undefined / false
 * for an empty batch, which makes no job.
 */
export interface AcceptedBatch {
  jobs: AcceptedEvent[]
  jobId?: string
  replayed: boolean
}

/**
 * A handshake (Slack, Zoom, Discord) is answered, not enqueued. `acknowledge` is the answer a provider
 * requires for an enqueued event instead of 202 (Discord).
 */
export type AcceptResult = (EnqueueResult & { acknowledge?: Handshake }) | AcceptedBatch | { handshake: Handshake }

export interface EnqueueOptions {
  /** An event id: the same id within the dedupe window makes no second job. Default: the payload's hash. */
  eventId?: string
  eventType?: string
  contentType?: string
  headers?: Record<string, string>
  /** Overrides the source name used in the key and on the job. */
  source?: string
  /** Stored on the job and logged by the worker, e.g. the id of the request that led to this event. */
  requestId?: string
}

/**
 * The inbound chain without HTTP: verify on the raw bytes, derive the key, enqueue.
 * The Fastify plugin is a thin adapter around it.
 */
export class Ingress {
  readonly queue: WebhookQueue
  /** With `journal: { queue: 'postgres' }`: where events go instead of `queue`. */
  readonly store?: PgEventQueue
  readonly options: ResolvedIngress
  private readonly bySource: Map<string, ResolvedSource>

  constructor (options: ResolvedIngress, onRedisError?: (err: Error) => void) {
    this.options = options
    this.bySource = new Map(options.sources.map((source) => [source.name, source]))
    this.queue = new WebhookQueue({
      redis: options.redis,
      settings: options.settings,
      enqueueTimeoutMs: options.enqueueTimeoutMs,
      replication: options.replication,
      telemetry: options.telemetry,
      onRedisError
    })
    if (options.journal !== undefined) this.store = new PgEventQueue(options.journal.database, options.settings, options.journal.schema, options.enqueueTimeoutMs)
  }

  /** Into the journal's queue when it has one, else BullMQ. */
  private async add (input: EnqueueInput): Promise<EnqueueResult> {
    return this.store === undefined ? await this.queue.enqueue(input) : await this.store.enqueue(input)
  }

  /**
   * Verifies, then enqueues (or, for a provider's handshake, returns the answer and enqueues nothing).
   * Throws a 401 Anvil error before any Redis command when the signature fails. `request.source` names the
   * source (default: the first); `request.url` is the URL the provider signed, for presets that sign it.
   */
  async accept (payload: Buffer, headers: IncomingHttpHeaders, request: AcceptRequest = {}): Promise<AcceptResult> {
    const receivedAt = Date.now()
    const route = this.sourceNamed(request.source)
    const verified = route.scheme.verify(payload, headers, request)
    const source = route.name
    const provider = route.scheme.name
    const eventType = verified.eventType
    publish('verified', () => ({ source, provider, eventType }))
    if (verified.handshake !== undefined) return { handshake: verified.handshake }
    const { signature } = verified
    const requestId = isRequestId(request.requestId) ? request.requestId : undefined
    if (verified.events !== undefined) return await this.acceptBatch(route, verified.events, headers, signature, receivedAt, requestId)
    const result = await this.enqueueVerified(route, { payload, eventId: verified.eventId, eventType }, headers, signature, receivedAt, requestId)
    return verified.acknowledge === undefined ? result : { ...result, acknowledge: verified.acknowledge }
  }

  /**
   * Every event of a batch is handed to the queue in the same turn, so they share its pipelines. The answer
   * waits for all of them: one failure is a 503, and the provider's retry of the whole batch finds the
   * events that did get in already there (replayed), so nothing is doubled and nothing accepted is lost.
   */
  private async acceptBatch (route: ResolvedSource, events: VerifiedEvent[], headers: IncomingHttpHeaders, signature: string | undefined, receivedAt: number, requestId: string | undefined): Promise<AcceptedBatch> {
    const settled = await Promise.allSettled(events.map(async (event) => await this.enqueueVerified(route, event, headers, signature, receivedAt, requestId)))
    const jobs: AcceptedEvent[] = []
    for (const [index, outcome] of settled.entries()) {
      if (outcome.status === 'rejected') throw outcome.reason
      const { eventId } = events[index] as VerifiedEvent
      jobs.push(eventId === undefined ? outcome.value : { eventId, ...outcome.value })
    }
    return { jobs, jobId: jobs[0]?.jobId, replayed: jobs.length > 0 && jobs.every((job) => job.replayed) }
  }

  /** Keys one verified event (the source's idempotency strategy sees the event's own bytes) and enqueues it. */
  private async enqueueVerified (route: ResolvedSource, event: VerifiedEvent, headers: IncomingHttpHeaders, signature: string | undefined, receivedAt: number, requestId: string | undefined): Promise<EnqueueResult> {
    const { payload, eventType } = event
    const source = route.name
    const provider = route.scheme.name
    publish('eventReceived', () => ({ source, provider, eventType }))
    const derived = route.deriveKey({ source, payload, headers, signature, eventId: event.eventId, json: lazyJson(payload) })
    return noteEnqueued({ source, provider, eventType }, await this.add({
      source,
      key: derived.key,
      payload,
      contentType: headers['content-type'],
      signature,
      eventId: derived.eventId ?? event.eventId,
      eventType,
      provider,
      headers: storedHeaders(headers),
      receivedAt,
      requestId
    }))
  }

  private sourceNamed (name: string | undefined): ResolvedSource {
    const found = name === undefined ? this.options.sources[0] : this.bySource.get(name)
    if (found === undefined) throw new errors.INVALID_OPTIONS(`no source named ${String(name)}`)
    return found
  }

  /** Enqueues an event from application code, with the same dedupe window as webhooks. */
  async enqueue (payload: Buffer | string | object, opts: EnqueueOptions = {}): Promise<EnqueueResult> {
    let bytes: Buffer
    let contentType = opts.contentType
    if (Buffer.isBuffer(payload)) {
      bytes = payload
    } else if (typeof payload === 'string') {
      bytes = Buffer.from(payload, 'utf8')
      contentType ??= 'text/plain; charset=utf-8'
    } else if (typeof payload === 'object' && payload !== null) {
      bytes = Buffer.from(JSON.stringify(payload), 'utf8')
      contentType ??= 'application/json'
    } else {
      throw new errors.INVALID_PAYLOAD('enqueue takes a Buffer, a string or a JSON-serialisable object')
    }
    if (opts.eventId !== undefined && (typeof opts.eventId !== 'string' || opts.eventId === '')) {
      throw new errors.INVALID_PAYLOAD('eventId must be a non-empty string')
    }
    if (opts.requestId !== undefined && !isRequestId(opts.requestId)) {
      throw new errors.INVALID_PAYLOAD(`requestId must be ${REQUEST_ID_RULE}`)
    }
    const source = opts.source ?? this.options.source
    return noteEnqueued({ source, provider: 'app', eventType: opts.eventType }, await this.add({
      source,
      key: opts.eventId === undefined ? payloadKey(source, bytes) : eventIdKey(source, opts.eventId),
      payload: bytes,
      contentType,
      eventId: opts.eventId,
      eventType: opts.eventType,
      provider: 'app',
      // The caller may pass a request's headers: credentials are dropped here too.
      headers: storedHeaders(opts.headers ?? {}),
      receivedAt: Date.now(),
      requestId: opts.requestId
    }))
  }

  async close (): Promise<void> {
    await this.store?.close()
    await this.queue.close()
  }
}
