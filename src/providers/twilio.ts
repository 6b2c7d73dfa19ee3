/**
 * Twilio: `X-Twilio-Signature: <base64>`, HMAC-SHA1 (or HMAC-SHA256 when
 * `X-Twilio-Webhooks-Signature-Settings` says `algorithm=HMAC_SHA256`) over the public URL followed by the
 * form parameters sorted by name, each as name + value. JSON bodies are signed through the URL's
 * `bodySHA256` query parameter, which must equal the body's SHA-256. The URL is tried with and without the
 * scheme's default port, as Twilio's SDK does. This is the one preset that parses before verifying: the
 * form parameters are what is signed.
 */
import { errors } from '../shared/errors.js'
import type { SignatureScheme } from '../signing/signature-scheme.js'
import { constantTimeEqual, decodeBase64, hmac, requireMatch, sha256Hex } from '../signing/crypto.js'
import { isFormEncoded, optionalHeader, requireHeader } from '../signing/headers.js'
import { signedUrl } from '../signing/signed-url.js'
import { definePreset, type PresetConfig } from './define-preset.js'
import { presetKeys } from '../signing/preset-keys.js'

const HEADER = 'x-twilio-signature'
/** The headers that carry its signature: read by the scheme, redacted from logs. */
export const twilioHeaders: readonly string[] = [HEADER]
const SETTINGS = 'x-twilio-webhooks-signature-settings'

function algorithm (settings: string | undefined): 'sha1' | 'sha256' {
  const named = /(?:^|,)\s*algorithm=([A-Z0-9_]+)/i.exec(settings ?? '')?.[1]?.toUpperCase()
  if (named === undefined || named === 'HMAC_SHA1') return 'sha1'
  if (named === 'HMAC_SHA256') return 'sha256'
  throw new errors.SIGNATURE_MALFORMED(SETTINGS)
}

/** The URL as Twilio may have signed it: without and with the scheme's default port. */
function urlVariants (url: string): string[] {
  const parsed = new URL(url)
  const defaultPort = parsed.protocol === 'https:' ? '443' : '80'
  const authority = /^[a-z]+:\/\/[^/?#]+/i.exec(url)?.[0] ?? ''
  const rest = url.slice(authority.length)
  const origin = `${parsed.protocol}//${parsed.username === '' ? '' : `${parsed.username}:${parsed.password}@`}`
  const host = parsed.hostname.includes(':') && !parsed.hostname.startsWith('[') ? `[${parsed.hostname}]` : parsed.hostname
  return [`${origin}${host}${rest}`, `${origin}${host}:${parsed.port === '' ? defaultPort : parsed.port}${rest}`]
}

/** Sorted by name; a repeated name contributes each distinct value, sorted (Twilio's SDK does the same). */
function signedParams (payload: Buffer): string {
  const form = new URLSearchParams(payload.toString('utf8'))
  const names = [...new Set(form.keys())].sort()
  return names.map((name) => [...new Set(form.getAll(name))].sort().map((value) => name + value).join('')).join('')
}

export function twilioScheme (config: PresetConfig): SignatureScheme {
  const keys = presetKeys('twilio', config.secrets)
  return definePreset(config, {
    name: 'twilio',
    headers: twilioHeaders,
    check (payload, headers, request) {
      const value = requireHeader(headers, HEADER)
      const given = decodeBase64(value, HEADER)
      const hash = algorithm(optionalHeader(headers, SETTINGS))
      const signed = signedUrl(request)
      const urls = urlVariants(signed)
      const bodyHash = new URL(signed).searchParams.get('bodySHA256')
      const params = bodyHash === null && isFormEncoded(headers) ? signedParams(payload) : ''
      const expected = keys.flatMap((key) => urls.map((url) => hmac(hash, key, url, params)))
      requireMatch(expected, [given])
      if (bodyHash !== null) {
        // The URL (with its bodySHA256) is signed; the body is bound to it by its hash.
        if (!constantTimeEqual(Buffer.from(sha256Hex(payload)), Buffer.from(bodyHash))) throw new errors.SIGNATURE_INVALID()
      } else if (!isFormEncoded(headers) && payload.length > 0) {
        // A body that is neither the signed form nor bound by bodySHA256 would go unverified.
        throw new errors.SIGNATURE_INVALID()
      }
      return { signature: value }
    },
    describe (_payload, headers) {
      return { eventId: optionalHeader(headers, 'i-twilio-idempotency-token') }
    }
  })
}
