/**
 * The pieces every preset shares: header reading, constant-time comparison across secrets and signatures,
 * the timestamp tolerance, and the order "verify, then read the body". Framework-free.
 */
import { createHash, createHmac, createSecretKey, timingSafeEqual, type BinaryLike, type KeyObject } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { errors } from '../errors.js'
import type { Handshake, RequestInfo, SignatureScheme, Verified, VerifiedEvent } from '../signature.js'

/** 300 s both ways: Stripe's, Slack's and Standard Webhooks' own default. */
export const DEFAULT_TOLERANCE_SECONDS = 300

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

/** What is read from a verified request. */
export interface Described {
  eventId?: string
  eventType?: string
  /** A timestamp that sits inside the signed body (Linear), in seconds. */
  timestamp?: number
  handshake?: Handshake
  acknowledge?: Handshake
  /** The events of a batch body (presets with `batches: true`), each enqueued as its own job. */
  events?: VerifiedEvent[]
}

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

/** A single header value; a missing one is MISSING, a repeated one is ambiguous and refused as MALFORMED. */
export function requireHeader (headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name]
  if (value === undefined || value === '') throw new errors.SIGNATURE_MISSING(name)
  if (Array.isArray(value)) throw new errors.SIGNATURE_MALFORMED(name)
  return value
}

export function optionalHeader (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** A whole number of seconds, as providers send it; anything else is MALFORMED. */
export function parseSeconds (value: string, header: string): number {
  if (!/^\d{1,12}$/.test(value)) throw new errors.SIGNATURE_MALFORMED(header)
  return Number(value)
}

/**
 * The secrets as HMAC keys, made once when the scheme is built: an HMAC keyed with a string or Buffer
 * imports the key on every call, about a quarter of a small body's check (bench/verify.mjs).
 */
export function hmacKeys (secrets: ReadonlyArray<string | Buffer>): KeyObject[] {
  return secrets.map((secret) => createSecretKey(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret))
}

export function hmac (algorithm: 'sha256' | 'sha1', key: KeyObject, ...parts: Array<string | Buffer>): Buffer {
  const mac = createHmac(algorithm, key)
  for (const part of parts) mac.update(part)
  return mac.digest()
}

export function sha256Hex (data: BinaryLike): string {
  return createHash('sha256').update(data).digest('hex')
}

/**
 * Compares every expected MAC (one per secret) with every given signature and reports the secret that
 * matched. No early exit: the time depends on how many there are, not on which (if any) matched. A given
 * signature of the wrong length is compared against a zero buffer of the right length, and fails.
 */
export function matchAny (expected: readonly Buffer[], given: readonly Buffer[]): number | undefined {
  let matched: number | undefined
  expected.forEach((mac, index) => {
    for (const candidate of given) {
      const sameLength = candidate.length === mac.length
      const equal = timingSafeEqual(mac, sameLength ? candidate : Buffer.alloc(mac.length))
      if (equal && sameLength) matched = index
    }
  })
  return matched
}

/** Throws SIGNATURE_INVALID unless a secret's MAC matches a given signature; returns the secret's index. */
export function requireMatch (expected: readonly Buffer[], given: readonly Buffer[]): number {
  const matched = matchAny(expected, given)
  if (matched === undefined) throw new errors.SIGNATURE_INVALID()
  return matched
}

/** Decodes strict base64 (padding included); anything else is MALFORMED. */
export function decodeBase64 (value: string, header: string): Buffer {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length % 4 !== 0) throw new errors.SIGNATURE_MALFORMED(header)
  return Buffer.from(value, 'base64')
}

/** Decodes lower-case hex of an exact length in bytes; anything else is MALFORMED. */
export function decodeHex (value: string, bytes: number, header: string): Buffer {
  if (value.length !== bytes * 2 || !/^[0-9a-f]+$/.test(value)) throw new errors.SIGNATURE_MALFORMED(header)
  return Buffer.from(value, 'hex')
}

/** The body as JSON, or undefined; only called after verification. */
export function parseJson (payload: Buffer): unknown {
  try { return JSON.parse(payload.toString('utf8')) } catch { return undefined }
}

/**
 * A verified body that is a JSON array of objects, split into one event each: the element re-serialised as
 * its payload (the signed bytes are the whole array; they cannot be cut per event without a parser of our
 * own), its id and type read from `fields`. Anything else is refused as 400 ANVIL_ERR_INVALID_PAYLOAD.
 */
export function splitJsonArray (payload: Buffer, fields: { eventId: string, eventType: string }, provider: string): VerifiedEvent[] {
  const body = parseJson(payload)
  if (!Array.isArray(body) || !body.every((event) => event !== null && typeof event === 'object' && !Array.isArray(event))) {
    throw new errors.INVALID_PAYLOAD(`a ${provider} body is a JSON array of event objects`)
  }
  return body.map((event) => ({
    payload: Buffer.from(JSON.stringify(event), 'utf8'),
    eventId: field(event, fields.eventId),
    eventType: field(event, fields.eventType)
  }))
}

/** A string (or finite number, as a string) at a dotted path of a parsed body. */
export function field (value: unknown, path: string): string | undefined {
  let current = value
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined
    current = (current as Record<string, unknown>)[part]
  }
  if (typeof current === 'string' && current !== '') return current
  if (typeof current === 'number' && Number.isFinite(current)) return String(current)
  return undefined
}

export function isFormEncoded (headers: IncomingHttpHeaders): boolean {
  return (headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')
}

export function requireSecrets (name: string, secrets: readonly string[]): void {
  if (secrets.length === 0) throw new errors.INVALID_OPTIONS(`the ${name} preset needs at least one secret`)
}

/** An HMAC preset's keys: at least one secret, each made into a key once (`hmacKeys`). */
export function presetKeys (name: string, secrets: readonly string[]): KeyObject[] {
  requireSecrets(name, secrets)
  return hmacKeys(secrets)
}

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

const V0_PREFIX = 'v0='

/**
 * A header of `key=value` items with one timestamp and one or more hex signatures, as Stripe
 * (`t=…,v1=…`) and Paddle (`ts=…;h1=…`) send it. Unknown keys are ignored (future schemes).
 */
export function parseTimestampedHeader (value: string, header: string, format: { separator: string, timestampKey: string, signatureKey: string }): { timestamp: string, given: Buffer[] } {
  let timestamp: string | undefined
  const given: Buffer[] = []
  for (const item of value.split(format.separator)) {
    const at = item.indexOf('=')
    const key = item.slice(0, at).trim()
    const part = item.slice(at + 1).trim()
    if (key === format.timestampKey) timestamp = part
    else if (key === format.signatureKey) given.push(decodeHex(part, 32, header))
  }
  if (timestamp === undefined || given.length === 0) throw new errors.SIGNATURE_MALFORMED(header)
  return { timestamp, given }
}
