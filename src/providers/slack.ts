/**
 * Slack: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 over `v0:<X-Slack-Request-Timestamp>:<body>`, for JSON
 * (Events API) and form-encoded (slash commands, interactivity) bodies alike. `url_verification` is
 * answered with its challenge and never enqueued.
 */
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { parseJson } from '../shared/json.js'
import { readPath } from '../shared/read-path.js'
import { isFormEncoded } from '../signing/headers.js'
import { checkV0 } from '../signing/check-v0.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { presetKeys } from '../signing/preset-keys.js'

const SIGNATURE = 'x-slack-signature'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const slackHeaders: readonly string[] = [SIGNATURE]
const TIMESTAMP = 'x-slack-request-timestamp'

/** Form bodies carry JSON in `payload` (interactivity) or plain fields (slash commands: `command`). */
function formBody (payload: Buffer): { eventType?: string } {
  const form = new URLSearchParams(payload.toString('utf8'))
  const inner = form.get('payload')
  if (inner !== null) return { eventType: readPath(parseJson(Buffer.from(inner)), 'type') }
  const command = form.get('command')
  return { eventType: command === null ? undefined : 'slash_command' }
}

export function slackScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('slack', config.secrets)
  return definePreset(config, {
    name: 'slack',
    headers: slackHeaders,
    check (payload, headers) {
      const { signature, timestamp } = checkV0(keys, payload, headers, { signature: SIGNATURE, timestamp: TIMESTAMP })
      return { signature, timestamp }
    },
    describe (payload, headers) {
      if (isFormEncoded(headers)) return formBody(payload)
      const body = parseJson(payload)
      const eventType = readPath(body, 'event.type') ?? readPath(body, 'type')
      if (readPath(body, 'type') === 'url_verification') {
        return { eventType, handshake: { statusCode: 200, body: { challenge: readPath(body, 'challenge') ?? '' } } }
      }
      return { eventId: readPath(body, 'event_id'), eventType }
    }
  })
}
