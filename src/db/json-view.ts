import { nestsDeeperThan } from '../shared/json.js'

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
