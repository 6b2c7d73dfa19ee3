/**
 * SendGrid Event Webhook: ECDSA P-256 / SHA-256 over `<timestamp><body>`, the DER signature in
 * `X-Twilio-Email-Event-Webhook-Signature` (base64), checked with the verification key from SendGrid's
 * settings (base64 DER, as shown there, or PEM). The body is an array of events, verified as a whole and
 * then split: each event is its own job, keyed on its `sg_event_id` and typed by its `event`, so the same
 * event in a later, differently composed batch is a duplicate.
 */
import { createPublicKey, type KeyObject } from 'node:crypto'
import { errors } from '../shared/errors.js'
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { decodeBase64, requireSignedBy } from '../signing/crypto.js'
import { parseSeconds, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { splitJsonArray } from '../inbound/split-json-array.js'

const SIGNATURE = 'x-twilio-email-event-webhook-signature'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const sendgridHeaders: readonly string[] = [SIGNATURE]
const TIMESTAMP = 'x-twilio-email-event-webhook-timestamp'

export function sendgridPublicKey (key: string): KeyObject {
  try {
    const parsed = key.includes('-----BEGIN')
      ? createPublicKey(key)
      : createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' })
    if (parsed.asymmetricKeyType !== 'ec') throw new Error('not an EC key')
    return parsed
  } catch {
    throw new errors.INVALID_OPTIONS('sendgrid verification keys are base64 DER (as SendGrid shows them) or PEM EC public keys')
  }
}

const EVENT_FIELDS = { eventId: 'sg_event_id', eventType: 'event' }

export function sendgridScheme (config: PresetConfig): SignatureScheme {
  if (config.secrets.length === 0) throw new errors.INVALID_OPTIONS('the sendgrid preset needs at least one verification key')
  const keys = config.secrets.map(sendgridPublicKey)
  return definePreset(config, {
    name: 'sendgrid',
    headers: sendgridHeaders,
    batches: true,
    check (payload, headers) {
      const value = requireHeader(headers, SIGNATURE)
      const timestamp = requireHeader(headers, TIMESTAMP)
      const signature = decodeBase64(value, SIGNATURE)
      const seconds = parseSeconds(timestamp, TIMESTAMP)
      const message = Buffer.concat([Buffer.from(timestamp, 'utf8'), payload])
      requireSignedBy('sha256', message, keys, signature)
      return { signature: value, timestamp: seconds }
    },
    describe (payload) {
      return { events: splitJsonArray(payload, EVENT_FIELDS, 'sendgrid') }
    }
  })
}
