import type { IncomingHttpHeaders } from 'node:http'
import { errors } from './errors.js'
import { eventIdKey, lazyJson, payloadKey } from './idempotency.js'
import { storedHeaders } from './job.js'
import { WebhookQueue, type EnqueueResult } from './queue.js'
import type { ResolvedIngress } from './options.js'

export interface EnqueueOptions {
  /** An event id: the same id within the dedupe window makes no second job. Default: the payload's hash. */
  eventId?: string
  eventType?: string
  contentType?: string
  headers?: Record<string, string>
  /** Overrides the source name used in the key and on the job. */
  source?: string
}

/**
 * The inbound chain without HTTP: verify on the raw bytes, derive the key, enqueue.
 * The Fastify plugin is a thin adapter around it.
 */
export class Ingress {
  readonly queue: WebhookQueue
  readonly options: ResolvedIngress

  constructor (options: ResolvedIngress, onRedisError?: (err: Error) => void) {
    this.options = options
    this.queue = new WebhookQueue({
      redis: options.redis,
      settings: options.settings,
      enqueueTimeoutMs: options.enqueueTimeoutMs,
      onRedisError
    })
  }

  /** Verifies, then enqueues. Throws a 401 Anvil error before any Redis command when the signature fails. */
  async accept (payload: Buffer, headers: IncomingHttpHeaders): Promise<EnqueueResult> {
    const receivedAt = Date.now()
    const { signature } = this.options.scheme.verify(payload, headers)
    const { source } = this.options
    const { key, eventId } = this.options.deriveKey({ source, payload, headers, signature, json: lazyJson(payload) })
    return await this.queue.enqueue({
      source,
      key,
      payload,
      contentType: headers['content-type'],
      signature,
      eventId,
      provider: this.options.scheme.name,
      headers: storedHeaders(headers),
      receivedAt
    })
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
    const source = opts.source ?? this.options.source
    return await this.queue.enqueue({
      source,
      key: opts.eventId === undefined ? payloadKey(source, bytes) : eventIdKey(source, opts.eventId),
      payload: bytes,
      contentType,
      eventId: opts.eventId,
      eventType: opts.eventType,
      provider: 'app',
      headers: opts.headers ?? {},
      receivedAt: Date.now()
    })
  }

  async close (): Promise<void> {
    await this.queue.close()
  }
}
