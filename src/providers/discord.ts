/**
 * Discord interactions and webhook events: Ed25519 over `<X-Signature-Timestamp><body>`, checked with the
 * application's public key (hex, from the developer portal; several may be listed). An interaction PING
 * (type 1) is answered with `{ type: 1 }`, a webhook-event PING (type 0) with 204; neither is enqueued.
 * Other interactions are enqueued and answered with a deferred response; webhook events with 204.
 * Discord probes with bad signatures on purpose and expects 401.
 */
import { createPublicKey, type KeyObject } from 'node:crypto'
import { errors } from '../shared/errors.js'
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { parseJson } from '../shared/json.js'
import { readPath } from '../shared/read-path.js'
import { decodeHex, requireSignedBy } from '../signing/crypto.js'
import { parseSeconds, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'

const SIGNATURE = 'x-signature-ed25519'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const discordHeaders: readonly string[] = [SIGNATURE]
const TIMESTAMP = 'x-signature-timestamp'
/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const INTERACTION_PING = '1'
const PONG = 1
const WEBHOOK_EVENT_PING = '0'
/**
 * Interaction type → the deferred response Discord accepts while the job runs: application commands (2)
 * and modal submits (5) get "thinking…" (5), message components (3) a deferred update (6). Autocomplete
 * (4) cannot be deferred: it gets the plain 202, which Discord ignores, so answer autocomplete elsewhere.
 */
const DEFERRED_RESPONSE: Record<string, number> = { 2: 5, 3: 6, 5: 5 }

export function discordPublicKey (hex: string): KeyObject {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new errors.INVALID_OPTIONS('discord public keys are 64 hex digits')
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' })
}

export function discordScheme (config: PresetConfig): SignatureScheme {
  if (config.secrets.length === 0) throw new errors.INVALID_OPTIONS('the discord preset needs at least one public key')
  const keys = config.secrets.map(discordPublicKey)
  return definePreset(config, {
    name: 'discord',
    headers: discordHeaders,
    check (payload, headers) {
      const value = requireHeader(headers, SIGNATURE)
      const timestamp = requireHeader(headers, TIMESTAMP)
      const signature = decodeHex(value.toLowerCase(), 64, SIGNATURE)
      const seconds = parseSeconds(timestamp, TIMESTAMP)
      const message = Buffer.concat([Buffer.from(timestamp, 'utf8'), payload])
      requireSignedBy(null, message, keys, signature)
      return { signature: value, timestamp: seconds }
    },
    describe (payload) {
      const body = parseJson(payload)
      const type = readPath(body, 'type')
      // Interactions carry a token; webhook events (Discord's newer event delivery) do not, and number their types differently.
      if (readPath(body, 'token') === undefined) {
        if (type === WEBHOOK_EVENT_PING) return { eventType: 'PING', handshake: { statusCode: 204 } }
        return { eventType: readPath(body, 'event.type'), acknowledge: { statusCode: 204 } }
      }
      if (type === INTERACTION_PING) return { eventType: type, handshake: { statusCode: 200, body: { type: PONG } } }
      const deferred = type === undefined ? undefined : DEFERRED_RESPONSE[type]
      return {
        eventId: readPath(body, 'id'),
        eventType: type,
        // The handler answers later through the interaction token; Discord needs an answer within 3 s.
        acknowledge: deferred === undefined ? undefined : { statusCode: 200, body: { type: deferred } }
      }
    }
  })
}
