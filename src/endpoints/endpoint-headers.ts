/**
 * An endpoint's custom headers (`headers: { name: value }`), sent with each delivery. Names are HTTP tokens and
 * never one Anvil sets or the connection owns; values may be credentials, so they are kept like signing secrets:
 * never answered (only the names are), never in job data, and `[redacted]` in the delivery log.
 */
import { Type } from '@sinclair/typebox'

export const MAX_CUSTOM_HEADERS = 20
export const MAX_HEADER_VALUE_CHARS = 4096

/** RFC 9110's token: the characters a field name may hold. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/
/** A field value: visible characters, spaces and tabs inside; no CR, LF or NUL. */
const VALUE = /^[^\x00-\x08\x0a-\x1f\x7f]*$/

/** What Anvil sets on every delivery (signatures, the body's type, tracing) or the connection owns. */
const RESERVED_EXACT = new Set([
  'content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'host', 'connection', 'keep-alive', 'upgrade',
  'te', 'trailer', 'expect', 'user-agent', 'traceparent', 'tracestate', 'date'
])
const RESERVED_PREFIXES = ['webhook-', 'x-webhook-', 'proxy-', ':']

/** True when `name` may not be a custom header. */
export function reservedHeader (name: string): boolean {
  const lower = name.toLowerCase()
  return RESERVED_EXACT.has(lower) || RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix))
}

/** Custom headers as given: names checked, not reserved; `null` (a patch's) removes one. */
export const CustomHeaders = (nullable: boolean) => Type.Record(Type.String(), nullable
  ? Type.Union([Type.String({ maxLength: MAX_HEADER_VALUE_CHARS }), Type.Null()])
  : Type.String({ maxLength: MAX_HEADER_VALUE_CHARS }), { maxProperties: MAX_CUSTOM_HEADERS })

/** The first problem of custom headers (never quoting a value: it may be a secret), or undefined. */
export function customHeadersProblem (headers: Record<string, string | null> | undefined): string | undefined {
  if (headers === undefined) return undefined
  const seen = new Set<string>()
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) return `headers: ${JSON.stringify(name.slice(0, 100))} is not a header name (letters, digits and !#$%&'*+.^_\`|~-, at most 100)`
    const lower = name.toLowerCase()
    if (reservedHeader(lower)) return `headers: ${lower} is reserved (Anvil sets it, or the connection owns it)`
    if (seen.has(lower)) return `headers: ${lower} is named twice`
    seen.add(lower)
    if (value !== null && !VALUE.test(value)) return `headers: the value of ${lower} holds a control character (CR, LF, NUL)`
  }
  return undefined
}

/** Names in lower case, as stored and sent. */
export function lowerCaseNames<T> (headers: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
}
