/**
 * Slack: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 over `v0:<X-Slack-Request-Timestamp>:<body>`, for JSON
 * (Events API) and form-encoded (slash commands, interactivity) bodies alike. `url_verification` is
 * answered with its challenge and never enqueued.
 */
import { errors } from '../errors.js'
import type { SignatureScheme } from '../signature.js'
import { decodeHex, definePreset, field, hmac, isFormEncoded, parseJson, parseSeconds, requireHeader, requireMatch, requireSecrets, type PresetConfig } from './common.js'

const SIGNATURE = 'x-slack-signature'
const TIMESTAMP = 'x-slack-request-timestamp'
const PREFIX = 'v0='

/** Form bodies carry JSON in `payload` (interactivity) or plain fields (slash commands: `command`). */
function formBody (payload: Buffer): { eventType?: string } {
  const form = new URLSearchParams(payload.toString('utf8'))
  const inner = form.get('payload')
  if (inner !== null) return { eventType: field(parseJson(Buffer.from(inner)), 'type') }
  const command = form.get('command')
  return { eventType: command === null ? undefined : 'slash_command' }
}

export function slackScheme (config: PresetConfig): SignatureScheme {
  requireSecrets('slack', config.secrets)
  return definePreset(config, {
    name: 'slack',
    headers: [SIGNATURE],
    check (payload, headers) {
      const value = requireHeader(headers, SIGNATURE)
      const timestamp = requireHeader(headers, TIMESTAMP)
      if (!value.startsWith(PREFIX)) throw new errors.SIGNATURE_MALFORMED(SIGNATURE)
      const given = decodeHex(value.slice(PREFIX.length), 32, SIGNATURE)
      const seconds = parseSeconds(timestamp, TIMESTAMP)
      requireMatch(config.secrets.map((secret) => hmac('sha256', secret, `v0:${timestamp}:`, payload)), [given])
      return { signature: value, timestamp: seconds }
    },
    describe (payload, headers) {
      if (isFormEncoded(headers)) return formBody(payload)
      const body = parseJson(payload)
      const eventType = field(body, 'event.type') ?? field(body, 'type')
      if (field(body, 'type') === 'url_verification') {
        return { eventType, handshake: { statusCode: 200, body: { challenge: field(body, 'challenge') ?? '' } } }
      }
      return { eventId: field(body, 'event_id'), eventType }
    }
  })
}
