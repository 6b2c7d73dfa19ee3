/**
 * One POST of a webhook: a total timeout over connection, headers and body; at most a few KiB of the
 * answer kept and the rest never read (the socket is dropped), so a huge or endless answer holds nothing;
 * redirects not followed. It never throws: every outcome is a `SendResult`.
 */
import { request, type Dispatcher } from 'undici'
import { parseRetryAfter } from './retry-after.js'

/** Why an attempt failed, for the delivery log and the metrics. */
export type DeliveryErrorClass =
  'timeout' | 'connect' | 'dns' | 'ssrf' | 'network' | 'http_3xx' | 'http_4xx' | 'http_5xx' | 'http_other'

export interface SendRequest {
  url: string
  headers: Record<string, string>
  body: string
}

export interface SendOptions {
  dispatcher: Dispatcher
  /** The whole exchange, connection to the last byte kept. */
  timeoutMs: number
  /** Bytes of the answer kept for the delivery log. */
  responseCapBytes: number
}

export interface SendResult {
  success: boolean
  httpStatus?: number
  durationMs: number
  errorClass?: DeliveryErrorClass
  errorMessage?: string
  /** The first `responseCapBytes` of the answer, as text. */
  responseHead: string
  /** From `Retry-After`, on a 429 or 503 that had one. */
  retryAfterMs?: number
}

function statusClass (status: number): DeliveryErrorClass | undefined {
  if (status >= 200 && status < 300) return undefined
  if (status >= 300 && status < 400) return 'http_3xx'
  if (status >= 400 && status < 500) return 'http_4xx'
  if (status >= 500 && status < 600) return 'http_5xx'
  return 'http_other'
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET'])
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'ENODATA'])
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'])

/** The class of a thrown error; `timedOut` when our own deadline fired. */
export function errorClassOf (err: unknown, timedOut: boolean): DeliveryErrorClass {
  if (timedOut) return 'timeout'
  for (let e = err as { code?: unknown, cause?: unknown } | undefined, depth = 0; e !== undefined && e !== null && depth < 4; e = e.cause as typeof e, depth++) {
    const code = typeof e.code === 'string' ? e.code : ''
    if (code === 'ANVIL_ERR_OUTBOUND_ADDRESS_REFUSED') return 'ssrf'
    if (TIMEOUT_CODES.has(code)) return 'timeout'
    if (DNS_CODES.has(code)) return 'dns'
    if (CONNECT_CODES.has(code)) return 'connect'
  }
  return 'network'
}

/** Reads at most `cap` bytes, then drops the rest of the body (and with it the connection) unread. */
async function readHead (body: Dispatcher.ResponseData['body'], cap: number): Promise<string> {
  const chunks: Buffer[] = []
  let kept = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const room = cap - kept
    chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room))
    kept += Math.min(room, chunk.length)
    if (kept >= cap) {
      body.destroy()
      break
    }
  }
  return Buffer.concat(chunks).toString('utf8')
}

export async function sendWebhook (req: SendRequest, options: SendOptions): Promise<SendResult> {
  const started = performance.now()
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => { timedOut = true; controller.abort() }, options.timeoutMs)
  const elapsed = (): number => Math.round(performance.now() - started)
  try {
    const response = await request(req.url, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      dispatcher: options.dispatcher,
      signal: controller.signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs
    })
    const status = response.statusCode
    let responseHead = ''
    try {
      responseHead = await readHead(response.body, options.responseCapBytes)
    } catch (err) {
      // The status arrived: a 2xx whose body then stalls still counts as delivered, anything else as its status says.
      if (!(status >= 200 && status < 300)) throw err
    }
    const errorClass = statusClass(status)
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : undefined
    return {
      success: errorClass === undefined,
      httpStatus: status,
      durationMs: elapsed(),
      ...(errorClass === undefined ? {} : { errorClass, errorMessage: `HTTP ${status}` }),
      responseHead,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs })
    }
  } catch (err) {
    const errorClass = errorClassOf(err, timedOut)
    const errorMessage = errorClass === 'timeout' ? `no complete answer within ${options.timeoutMs} ms` : (err as Error).message
    return { success: false, durationMs: elapsed(), errorClass, errorMessage, responseHead: '' }
  } finally {
    clearTimeout(timer)
  }
}
