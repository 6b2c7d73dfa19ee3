import type { KeyObject } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { errors } from '../shared/errors.js'
import { decodeHex, hmac, requireMatch } from './crypto.js'
import { parseSeconds, requireHeader } from './headers.js'

const V0_PREFIX = 'v0='

/**
 * The `v0` scheme Slack and Zoom share: `<signature header>: v0=<hex>`, HMAC-SHA256 over
 * `v0:<timestamp header>:<body>`. Returns what `check` returns, with the index of the secret that matched.
 */
export function checkV0 (keys: readonly KeyObject[], payload: Buffer, headers: IncomingHttpHeaders, names: { signature: string, timestamp: string }): { signature: string, timestamp: number, secretIndex: number } {
  const value = requireHeader(headers, names.signature)
  const timestamp = requireHeader(headers, names.timestamp)
  if (!value.startsWith(V0_PREFIX)) throw new errors.SIGNATURE_MALFORMED(names.signature)
  const given = decodeHex(value.slice(V0_PREFIX.length), 32, names.signature)
  const seconds = parseSeconds(timestamp, names.timestamp)
  const secretIndex = requireMatch(keys.map((key) => hmac('sha256', key, `v0:${timestamp}:`, payload)), [given])
  return { signature: value, timestamp: seconds, secretIndex }
}
