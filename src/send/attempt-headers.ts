/**
 * The headers an attempt sent and got back, as the delivery log keeps them: lower-case names, at most
 * `MAX_HEADERS` of them, each value cut to `MAX_VALUE_CHARS`, in all at most `HEADERS_CAP_BYTES` of JSON, with
 * credentials redacted. A receiver's answer is outside input: it never grows the log past the cap.
 */
export const MAX_HEADERS = 40
export const MAX_VALUE_CHARS = 300
export const HEADERS_CAP_BYTES = 4096
export const REDACTED = '[redacted]'

/** Names whose values are credentials (a receiver's cookie, a custom header carrying a token): never kept. */
const CREDENTIAL = /authorization|cookie|secret|token|password|api-?key|session/i
/** A signature header keeps its scheme and the start of the first signature: enough to tell which key signed. */
const SIGNATURE = /signature/i

function keptValue (name: string, value: string): string {
  if (CREDENTIAL.test(name)) return REDACTED
  if (SIGNATURE.test(name)) return value.replace(/^((?:v1a?,|t=\d+,v1=)?[A-Za-z0-9+/=_-]{0,8})[\s\S]*$/, '$1…')
  return value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS)}…` : value
}

/** The headers as the log keeps them; undefined for none. */
export function loggedHeaders (headers: Record<string, string | string[] | undefined> | undefined): Record<string, string> | undefined {
  if (headers === undefined) return undefined
  const kept: Record<string, string> = {}
  let bytes = 2
  let count = 0
  for (const [rawName, rawValue] of Object.entries(headers)) {
    if (rawValue === undefined || count >= MAX_HEADERS) continue
    const name = rawName.toLowerCase().slice(0, 100)
    const value = keptValue(name, Array.isArray(rawValue) ? rawValue.join(', ') : String(rawValue))
    const size = Buffer.byteLength(JSON.stringify(name)) + Buffer.byteLength(JSON.stringify(value)) + 2
    if (bytes + size > HEADERS_CAP_BYTES) continue
    kept[name] = value
    bytes += size
    count++
  }
  return count === 0 ? undefined : kept
}
