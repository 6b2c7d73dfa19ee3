import { createHash } from 'node:crypto'
import type { WebhookJobData } from '../queue/job-data.js'
import { nestsDeeperThan } from '../shared/json.js'


/** The journal's id of an event: the provider's event id where there is one, else the dedupe key. */
export function journalIdOf (data: Pick<WebhookJobData, 'eventId' | 'key'>): string {
  return data.eventId ?? data.key
}

/** PostgreSQL's text refuses NUL; a sender's event type may hold one. */
export function pgText (value: string | undefined): string | null {
  return value === undefined ? null : value.includes('\0') ? value.replaceAll('\0', '') : value
}

/** NUL, or a UTF-16 surrogate (a lone one is JSON's `\udXXX`, which jsonb refuses). */
const JSONB_UNSAFE = /[\0\ud800-\udfff]/

/** A string jsonb takes: without NUL, a lone surrogate replaced (U+FFFD) by the round trip through UTF-8. */
function jsonbText (value: string): string {
  return JSONB_UNSAFE.test(value) ? Buffer.from(value.replaceAll('\0', ''), 'utf8').toString('utf8') : value
}

/** The headers as JSON that jsonb takes, whatever bytes a sender put in them. */
export function headersJson (headers: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(headers).map(([name, value]) => [jsonbText(name), jsonbText(String(value))])))
}

/** jsonb refuses `\u0000` and lone surrogates that JSON allows: such a body keeps its bytes but has no JSON view. */
const JSONB_REFUSES = /\\u(0000|d[89a-f])/i

/** The payload as text for the jsonb view, or null when it is not JSON (or not JSON PostgreSQL takes, or too deep to show). */
export function jsonView (payload: Buffer): string | null {
  const first = payload[0]
  // Only a body that starts like a JSON object or array is tried: parsing every form body would cost for nothing.
  if (first !== 0x7b && first !== 0x5b && first !== 0x20 && first !== 0x0a) return null
  const text = payload.toString('utf8')
  if (JSONB_REFUSES.test(text) || nestsDeeperThan(text)) return null
  try {
    JSON.parse(text)
    return text
  } catch {
    return null
  }
}

/** How an error is classed for queries: its code when it has one (`ECONNREFUSED`, `ANVIL_ERR_…`), else its name. */
export function errorClassOf (err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code
    return typeof code === 'string' && code !== '' ? code : err.name
  }
  return typeof err
}

export function errorMessageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** A short, stable digest for job ids (BullMQ refuses ':' in them, and event ids may hold one). */
export function digestOf (value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 32)
}
