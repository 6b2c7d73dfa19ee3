/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64>`, HMAC-SHA256 over the raw body. No signed timestamp
 * (X-Shopify-Triggered-At is not signed), so there is nothing to hold a tolerance against.
 */
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { decodeBase64, hmac, requireMatch } from '../signing/crypto.js'
import { optionalHeader, requireHeader } from '../signing/headers.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { presetKeys } from '../signing/preset-keys.js'

const HEADER = 'x-shopify-hmac-sha256'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const shopifyHeaders: readonly string[] = [HEADER]

export function shopifyScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('shopify', config.secrets)
  return definePreset(config, {
    name: 'shopify',
    headers: shopifyHeaders,
    check (payload, headers) {
      const value = requireHeader(headers, HEADER)
      const given = decodeBase64(value, HEADER)
      requireMatch(keys.map((key) => hmac('sha256', key, payload)), [given])
      return { signature: value }
    },
    describe (_payload, headers) {
      // X-Shopify-Event-Id stays the same across retries and across webhooks of one event; older shops send only the webhook id.
      const eventId = optionalHeader(headers, 'x-shopify-event-id') ?? optionalHeader(headers, 'x-shopify-webhook-id')
      return { eventId, eventType: optionalHeader(headers, 'x-shopify-topic') }
    }
  })
}
