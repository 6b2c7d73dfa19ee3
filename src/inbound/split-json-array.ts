import { errors } from '../shared/errors.js'
import { parseJson } from '../shared/json.js'
import { readPath } from '../shared/read-path.js'
import type { VerifiedEvent } from '../signing/signature-scheme.js'

/**
 * A verified body that is a JSON array of objects, split into one event each: the element re-serialised as
 * its payload (the signed bytes are the whole array; they cannot be cut per event without a parser of our
 * own), its id and type read from `fields`. Anything else is refused as 400 ANVIL_ERR_INVALID_PAYLOAD.
 */
export function splitJsonArray (payload: Buffer, fields: { eventId: string, eventType: string }, provider: string): VerifiedEvent[] {
  const body = parseJson(payload)
  if (!Array.isArray(body) || !body.every((event) => event !== null && typeof event === 'object' && !Array.isArray(event))) {
    throw new errors.INVALID_PAYLOAD(`a ${provider} body is a JSON array of event objects`)
  }
  return body.map((event) => ({
    payload: Buffer.from(JSON.stringify(event), 'utf8'),
    eventId: readPath(event, fields.eventId),
    eventType: readPath(event, fields.eventType)
  }))
}
