/**
 * SendGrid Event Webhook: ECDSA P-256 / SHA-256 over `<timestamp><body>`, the DER signature in
 * `X-Twilio-Email-Event-Webhook-Signature` (base64), checked with the verification key from SendGrid's
 * settings (base64 DER, as shown there, or PEM). The body is an array of events: the event id is their
 * `sg_event_id`s, sorted and joined, so a redelivered batch makes no second job.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { errors } from '../errors.js'
import type { SignatureScheme } from '../signature.js'
import { decodeBase64, definePreset, field, parseJson, parseSeconds, requireHeader, type PresetConfig } from './common.js'

const SIGNATURE = 'x-twilio-email-event-webhook-signature'
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

function describeEvents (events: unknown): { eventId?: string, eventType?: string } {
  if (!Array.isArray(events)) return {}
  const ids = events.map((event) => field(event, 'sg_event_id'))
  const types = [...new Set(events.map((event) => field(event, 'event')).filter((type) => type !== undefined))]
  return {
    eventId: ids.length === 0 || ids.includes(undefined) ? undefined : ids.sort().join(','),
    eventType: types.length === 0 ? undefined : types.sort().join(',')
  }
}

export function sendgridScheme (config: PresetConfig): SignatureScheme {
  if (config.secrets.length === 0) throw new errors.INVALID_OPTIONS('the sendgrid preset needs at least one verification key')
  const keys = config.secrets.map(sendgridPublicKey)
  return definePreset(config, {
    name: 'sendgrid',
    headers: [SIGNATURE],
    check (payload, headers) {
      const value = requireHeader(headers, SIGNATURE)
      const timestamp = requireHeader(headers, TIMESTAMP)
      const signature = decodeBase64(value, SIGNATURE)
      const seconds = parseSeconds(timestamp, TIMESTAMP)
      const message = Buffer.concat([Buffer.from(timestamp, 'utf8'), payload])
      let match = false
      for (const key of keys) match = verify('sha256', message, key, signature) || match
      if (!match) throw new errors.SIGNATURE_INVALID()
      return { signature: value, timestamp: seconds }
    },
    describe (payload) {
      return describeEvents(parseJson(payload))
    }
  })
}
