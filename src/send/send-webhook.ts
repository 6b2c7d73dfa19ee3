/**
 * One POST of a webhook: a total timeout over connection, headers and body; at most a few KiB of the
 * answer kept and the rest never read (the socket is dropped), so a huge or endless answer holds nothing;
 * redirects not followed. A 2xx is delivered when its status line arrives: its body then gets a short
 * deadline of its own, so a receiver trickling it holds the socket and the worker's slot only that long.
 * It never throws: every outcome is a `SendResult`.
 */
import type { Dispatcher } from 'undici'
import { parseRetryAfter } from './retry-after.js'
import { deliveryErrorClass, statusClass, type DeliveryErrorClass } from './delivery-error-class.js'
import { trackDeadline, untrackDeadline } from './send-deadlines.js'
import { loggedHeaders } from './attempt-headers.js'

export interface SendRequest {
  url: string
  headers: Record<string, string>
  body: string | Buffer
}

export interface SendOptions {
  dispatcher: Dispatcher
  /** The whole exchange, connection to the last byte kept. */
  timeoutMs: number
  /** Bytes of the answer kept for the delivery log. */
  responseCapBytes: number
  /** How long the body of a 2xx may take once its status arrived (within `timeoutMs`). */
  bodyTimeoutMs: number
}

export interface SendResult {
  success: boolean
  httpStatus?: number
  durationMs: number
  errorClass?: DeliveryErrorClass
  errorMessage?: string
  /** The first `responseCapBytes` of the answer, as text. */
  responseHead: string
  /** The answer's headers as the log keeps them (capped, credentials redacted); absent without an answer. */
  responseHeaders?: Record<string, string>
  /** From `Retry-After`, on a 429 or 503 that had one. */
  retryAfterMs?: number
}

/** Origin and path of each endpoint URL, parsed once (the same few URLs come back on every delivery); bounded. */
const targets = new Map<string, { origin: string, path: string }>()
const MAX_CACHED_TARGETS = 10_000

function targetOf (url: string): { origin: string, path: string } {
  let target = targets.get(url)
  if (target === undefined) {
    const parsed = new URL(url)
    if (targets.size >= MAX_CACHED_TARGETS) targets.clear()
    target = { origin: parsed.origin, path: parsed.pathname + parsed.search }
    targets.set(url, target)
  }
  return target
}

/** Why an exchange was cut short on our side (the cap reached, or the deadline). */
const CAP_REACHED = new Error('answer cap reached')

/**
 * undici's handler for one exchange, straight on the dispatcher: no response stream, no AbortController; the
 * deadline is kept by one shared coarse timer (`send-deadlines.ts`), which calls `expire`.
 */
class Exchange implements Dispatcher.DispatchHandler {
  status = 0
  retryAfter: string | undefined = undefined
  headers: Record<string, string> | undefined = undefined
  chunks: Buffer[] | undefined = undefined
  kept = 0
  settled = false
  timedOut = false
  controller: Dispatcher.DispatchController | undefined = undefined
  resolve!: (result: SendResult) => void

  constructor (readonly started: number, public deadline: number, readonly options: SendOptions) {}

  onRequestStart (controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.settled) controller.abort(CAP_REACHED)
  }

  onResponseStart (_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.status = statusCode
    this.headers = loggedHeaders(headers)
    // Delivered: what is left is the log's copy of the body, which may not hold the socket for long.
    if (statusCode >= 200 && statusCode < 300) this.deadline = Math.min(this.deadline, performance.now() + this.options.bodyTimeoutMs)
    if (statusCode === 429 || statusCode === 503) {
      const value = headers['retry-after']
      this.retryAfter = Array.isArray(value) ? value[0] : value
    }
  }

  onResponseData (controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const cap = this.options.responseCapBytes
    const room = cap - this.kept
    if (room <= 0) return
    const part = room >= chunk.length ? chunk : chunk.subarray(0, room)
    if (this.chunks === undefined) this.chunks = [part]
    else this.chunks.push(part)
    this.kept += part.length
    // The rest is never read: aborting drops the socket.
    if (this.kept >= cap) controller.abort(CAP_REACHED)
  }

  onResponseEnd (): void {
    this.answered()
  }

  onResponseError (_controller: Dispatcher.DispatchController, err: Error): void {
    // The status arrived: a 2xx whose body then stalls is delivered; the cap is a complete answer.
    if (err === CAP_REACHED || (this.status >= 200 && this.status < 300)) return this.answered()
    this.failed(err)
  }

  /** Called by the deadline timer. */
  expire (): void {
    this.timedOut = true
    if (this.controller !== undefined && !this.controller.aborted) this.controller.abort(new Error('deadline'))
    // Not dispatched yet (waiting for a connection): it is over now; the dispatch is aborted if it ever starts.
    else if (this.status >= 200 && this.status < 300) this.answered()
    else this.failed(new Error('deadline'))
  }

  private answered (): void {
    if (this.settled) return
    this.settled = true
    untrackDeadline(this)
    const status = this.status
    const result: SendResult = {
      success: false,
      httpStatus: status,
      durationMs: Math.round(performance.now() - this.started),
      responseHead: this.chunks === undefined ? '' : Buffer.concat(this.chunks).toString('utf8')
    }
    if (this.headers !== undefined) result.responseHeaders = this.headers
    const errorClass = statusClass(status)
    if (errorClass === undefined) result.success = true
    else {
      result.errorClass = errorClass
      result.errorMessage = `HTTP ${status}`
    }
    if (this.retryAfter !== undefined) {
      const retryAfterMs = parseRetryAfter(this.retryAfter)
      if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs
    }
    this.resolve(result)
  }

  private failed (err: Error): void {
    if (this.settled) return
    this.settled = true
    untrackDeadline(this)
    const errorClass = deliveryErrorClass(err, this.timedOut)
    const errorMessage = errorClass === 'timeout' ? `no complete answer within ${this.options.timeoutMs} ms` : err.message
    this.resolve({ success: false, durationMs: Math.round(performance.now() - this.started), errorClass, errorMessage, responseHead: '' })
  }
}

export async function sendWebhook (req: SendRequest, options: SendOptions): Promise<SendResult> {
  const started = performance.now()
  const exchange = new Exchange(started, started + options.timeoutMs, options)
  let target: { origin: string, path: string }
  try {
    target = targetOf(req.url)
  } catch (err) {
    return { success: false, durationMs: 0, errorClass: 'network', errorMessage: (err as Error).message, responseHead: '' }
  }
  const done = new Promise<SendResult>((resolve) => { exchange.resolve = resolve })
  trackDeadline(exchange)
  try {
    options.dispatcher.dispatch({
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers: req.headers,
      body: req.body,
      // undici's own timers as a backstop; the total deadline is the shared timer's.
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs
    }, exchange)
  } catch (err) {
    exchange.onResponseError(undefined as unknown as Dispatcher.DispatchController, err as Error)
  }
  return await done
}
