/** How a preset is put together: the order "check the signature, the timestamp, then read the body" lives here. */
import type { IncomingHttpHeaders } from 'node:http'
import { errors } from '../shared/errors.js'
import type { RequestInfo, SignatureScheme, Verified } from '../signing/signature-scheme.js'

/** 300 s both ways: Stripe's, Slack's and Standard Webhooks' own default. */
export const DEFAULT_TOLERANCE_SECONDS = 300
/** A day: past that a signed timestamp guards against nothing a dedupe window would not. */
export const MAX_TOLERANCE_SECONDS = 86_400

/** What a preset is built from; `secrets` are public keys for Discord and SendGrid. */
export interface PresetConfig {
  secrets: readonly string[]
  /** Seconds either way a signed timestamp may be from now; 0 turns the check off. */
  toleranceSeconds: number
  /** The URL as configured at the provider, for schemes that sign it. */
  publicUrl?: string
}

/** What the signature check proved, before the body is looked at. */
export interface Checked {
  signature?: string
  timestamp?: number
  /** Index of the secret that matched, for handshakes answered with it (Zoom). */
  secretIndex?: number
}

/** What is read from a verified request: all it proves but the signature; a `timestamp` here sits in the body (Linear). */
export type Described = Omit<Verified, 'signature'>

export interface PresetParts {
  name: string
  headers: readonly string[]
  /** The body is a batch: `describe` returns `events`. */
  batches?: boolean
  /** Throws on a missing, malformed or wrong signature. Must not parse the body (Twilio's form excepted). */
  check: (payload: Buffer, headers: IncomingHttpHeaders, request: RequestInfo) => Checked
  /** Runs only after `check` passed. */
  describe?: (payload: Buffer, headers: IncomingHttpHeaders, checked: Checked) => Described
}

/** Throws STALE when a signed timestamp (seconds) is further than the tolerance from now; 0 turns it off. */
function checkFresh (timestamp: number | undefined, toleranceSeconds: number, nowMs = Date.now()): void {
  if (timestamp === undefined || toleranceSeconds <= 0) return
  if (Math.abs(nowMs / 1000 - timestamp) > toleranceSeconds) throw new errors.STALE(toleranceSeconds)
}

/**
 * Builds a scheme whose order is fixed here, not in each preset: check the signature, then enforce the
 * tolerance on a timestamp the signature covers in a header (before the body is read: a stale replay costs no
 * parsing), then read the body, then enforce it on a timestamp found there, then (and only then) offer a handshake.
 */
export function definePreset (config: PresetConfig, parts: PresetParts): SignatureScheme {
  return {
    name: parts.name,
    headers: parts.headers,
    batches: parts.batches === true,
    verify (payload, headers, request = {}) {
      const checked = parts.check(payload, headers, request)
      checkFresh(checked.timestamp, config.toleranceSeconds, request.now)
      const described = parts.describe?.(payload, headers, checked) ?? {}
      if (checked.timestamp === undefined) checkFresh(described.timestamp, config.toleranceSeconds, request.now)
      const timestamp = checked.timestamp ?? described.timestamp
      const verified: Verified = { signature: checked.signature, timestamp, eventId: described.eventId, eventType: described.eventType }
      if (described.handshake !== undefined) verified.handshake = described.handshake
      if (described.acknowledge !== undefined) verified.acknowledge = described.acknowledge
      if (described.events !== undefined) verified.events = described.events
      return verified
    }
  }
}

