import { errors } from '../shared/errors.js'
import { decodeHex } from './crypto.js'

/**
 * A header of `key=value` items with one timestamp and one or more hex signatures, as Stripe
 * (`t=…,v1=…`) and Paddle (`ts=…;h1=…`) send it. Unknown keys are ignored (future schemes).
 */
export function parseTimestampedHeader (value: string, header: string, format: { separator: string, timestampKey: string, signatureKey: string }): { timestamp: string, given: Buffer[] } {
  let timestamp: string | undefined
  const given: Buffer[] = []
  for (const item of value.split(format.separator)) {
    const at = item.indexOf('=')
    const key = item.slice(0, at).trim()
    const part = item.slice(at + 1).trim()
    if (key === format.timestampKey) timestamp = part
    else if (key === format.signatureKey) given.push(decodeHex(part, 32, header))
  }
  if (timestamp === undefined || given.length === 0) throw new errors.SIGNATURE_MALFORMED(header)
  return { timestamp, given }
}
