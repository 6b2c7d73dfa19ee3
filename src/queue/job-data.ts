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
