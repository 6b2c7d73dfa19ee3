import type { IncomingHttpHeaders } from 'node:http'

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
