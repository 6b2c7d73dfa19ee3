import { errors } from '../shared/errors.js'
import type { RequestInfo } from './signature-scheme.js'

/**
 * The URL a scheme that signs it (Square, Twilio) checks against: the request's, as the plugin passes it. A
 * Host header that makes no URL cannot be what the provider signed.
 */
export function signedUrl (request: RequestInfo): string {
  /* c8 ignore next -- the plugin always passes the URL */
  if (request.url === undefined) throw new errors.SIGNATURE_INVALID()
  if (!URL.canParse(request.url)) throw new errors.SIGNATURE_INVALID()
  return request.url
}
