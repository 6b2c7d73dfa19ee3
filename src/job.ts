import type { IncomingHttpHeaders } from 'node:http'

/** What a job holds in Redis. The payload is base64, so any bytes survive JSON. Never a secret. */
export interface WebhookJobData {
  v: 1
  source: string
  key: string
  payload: string
  contentType?: string
  /** The verified signature header value (not a secret: it is what the sender sent). */
  signature?: string
  eventId?: string
  eventType?: string
  provider?: string
  headers: Record<string, string>
  /** Epoch ms when the request arrived (or `enqueue` was called). */
  receivedAt: number
  /** Retry delays in ms, fixed when the event was accepted; the worker's backoff reads them from here. */
  retry: readonly number[]
  /** Set on replayed jobs: the dead letter they came from. */
  replayOf?: string
  /** The HTTP request that brought the event (its `x-request-id`, or the id made for it); kept by replays. */
  requestId?: string
}

/** Headers that can carry credentials; they are never stored. */
const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-gitlab-token']
/**
 * Headers about the connection and the framing, not the event (RFC 9110 §7.6.1 hop-by-hop, and the length,
 * which the stored payload has): not stored, as every job is written to Redis and most are read once.
 */
const TRANSPORT_HEADERS = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length']
const UNSTORED_HEADERS = new Set([...SECRET_HEADERS, ...TRANSPORT_HEADERS])

/** The request headers kept on the job: single values only, credentials and transport headers dropped. */
export function storedHeaders (headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (typeof value === 'string' && !UNSTORED_HEADERS.has(name)) kept[name] = value
  }
  return kept
}

/** The event a handler receives. */
export interface WebhookEvent {
  /** BullMQ job id. */
  id: string
  /** The dedupe key. */
  key: string
  source: string
  provider?: string
  eventId?: string
  eventType?: string
  /**
   * The raw bytes exactly as received; for a preset whose body is a batch (SendGrid), this one event
   * re-serialised as JSON, and `signature` is the whole batch's (it cannot be checked against one event).
   */
  payload: Buffer
  /** The payload parsed as JSON on first call; throws when it is not JSON. */
  json<T = unknown> (): T
  contentType?: string
  signature?: string
  headers: Readonly<Record<string, string>>
  receivedAt: Date
  /** 1 for the first attempt. */
  attempt: number
  /** The dead letter this job was replayed from, if it was. */
  replayOf?: string
  /** The id of the request that brought the event, as in the ingress's log lines (a replay keeps it). */
  requestId?: string
}

export function toEvent (id: string, data: WebhookJobData, attempt: number): WebhookEvent {
  const payload = Buffer.from(data.payload, 'base64')
  let parsed: { value: unknown } | undefined
  return {
    id,
    key: data.key,
    source: data.source,
    provider: data.provider,
    eventId: data.eventId,
    eventType: data.eventType,
    payload,
    json<T> (): T {
      parsed ??= { value: JSON.parse(payload.toString('utf8')) }
      return parsed.value as T
    },
    contentType: data.contentType,
    signature: data.signature,
    headers: data.headers,
    receivedAt: new Date(data.receivedAt),
    attempt,
    replayOf: data.replayOf,
    requestId: data.requestId
  }
}
