/** How an outgoing POST's outcome is classified: by its status, or by the error that ended it. */

/** Why an attempt failed, for the delivery log and the metrics. */
export type DeliveryErrorClass =
  'timeout' | 'connect' | 'dns' | 'ssrf' | 'network' | 'http_3xx' | 'http_4xx' | 'http_5xx' | 'http_other' |
  /** The endpoint's OAuth token server refused the credentials, or answered no token. */
  'oauth'

export function statusClass (status: number): DeliveryErrorClass | undefined {
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
export function deliveryErrorClass (err: unknown, timedOut: boolean): DeliveryErrorClass {
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
