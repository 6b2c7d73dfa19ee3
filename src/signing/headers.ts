/** Reading signature headers: a missing one is MISSING, a repeated or misshapen one MALFORMED. */
import type { IncomingHttpHeaders } from 'node:http'
import { errors } from '../shared/errors.js'

/** A single header value; a missing one is MISSING, a repeated one is ambiguous and refused as MALFORMED. */
export function requireHeader (headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name]
  if (value === undefined || value === '') throw new errors.SIGNATURE_MISSING(name)
  if (Array.isArray(value)) throw new errors.SIGNATURE_MALFORMED(name)
  return value
}

export function optionalHeader (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** A whole number of seconds, as providers send it; anything else is MALFORMED. */
export function parseSeconds (value: string, header: string): number {
  if (!/^\d{1,12}$/.test(value)) throw new errors.SIGNATURE_MALFORMED(header)
  return Number(value)
}

export function isFormEncoded (headers: IncomingHttpHeaders): boolean {
  return (headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')
}
