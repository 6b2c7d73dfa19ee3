import { createHash, type Hash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { errors } from '../shared/errors.js'
import { readPath } from '../shared/read-path.js'

/** What a key function may look at; it runs only after the signature was verified. */
export interface KeyInput {
  source: string
  /** The body; for a preset whose body is a batch (SendGrid), one event's bytes, keyed on its own. */
  payload: Buffer
  headers: IncomingHttpHeaders
  /** The verified signature, where the request had one (not for `app.anvil.enqueue`). */
  signature?: string
  /** The event id the provider preset read from the verified request, where it has one. */
  eventId?: string
  /** The body parsed as JSON, on first use; undefined when it is not JSON. */
  json (): unknown
}

export interface DerivedKey {
  /** The dedupe key: a sha256 hex digest, so its length is bounded whatever the input. */
  key: string
  /** The provider's event id, where the key came from one. */
  eventId?: string
}

export type KeyFunction = (input: KeyInput) => string | undefined

/**
 * - `'signature'` (default): the signature and the raw body. Right for senders that sign once and resend the same bytes.
 * - `'payload'`: the raw body alone.
 * - `{ header }` / `{ bodyField }`: a provider event id (dotted path for body fields), for senders that re-sign every retry.
 * - `'provider'`: the event id the provider preset reads (Stripe's `id`, GitHub's `X-GitHub-Delivery`, …); the
 *   default for every preset but `anvil`, because those providers re-sign each retry.
 * - a function returning the event id.
 * When an event id is missing, the key falls back to the payload, so the event is still accepted once.
 */
export type IdempotencyStrategy = 'signature' | 'payload' | 'provider' | { header: string } | { bodyField: string } | KeyFunction

export type KeyDeriver = (input: KeyInput) => DerivedKey

/** One part's length prefix; `update` copies it at once, so one buffer serves every part. */
const lengthPrefix = Buffer.alloc(4)

/** Hashes one part after its length, so ("ab","c") and ("a","bc") cannot collide. */
function part (hash: Hash, value: Buffer | string): Hash {
  lengthPrefix.writeUInt32BE(typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value.length)
  return hash.update(lengthPrefix).update(value)
}

function digest (kind: string, source: string, first: Buffer | string, second?: Buffer): string {
  const hash = part(part(part(createHash('sha256'), kind), source), first)
  return (second === undefined ? hash : part(hash, second)).digest('hex')
}

export function signatureKey (source: string, signature: string, payload: Buffer): string {
  return digest('signature', source, signature, payload)
}

export function payloadKey (source: string, payload: Buffer): string {
  return digest('payload', source, payload)
}

export function eventIdKey (source: string, eventId: string): string {
  return digest('event', source, eventId)
}

function byEventId (read: (input: KeyInput) => string | undefined): KeyDeriver {
  return (input) => {
    const raw = read(input) as unknown
    // A custom function may hand back a number; anything else that is not a string counts as no id.
    const eventId = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : raw
    if (typeof eventId !== 'string' || eventId === '') return { key: payloadKey(input.source, input.payload) }
    return { key: eventIdKey(input.source, eventId), eventId }
  }
}

export function createKeyDeriver (strategy: IdempotencyStrategy = 'signature'): KeyDeriver {
  if (strategy === 'signature') {
    return (input) => ({
      key: input.signature === undefined
        ? payloadKey(input.source, input.payload)
        : signatureKey(input.source, input.signature, input.payload)
    })
  }
  if (strategy === 'payload') return (input) => ({ key: payloadKey(input.source, input.payload) })
  if (strategy === 'provider') return byEventId((input) => input.eventId)
  if (typeof strategy === 'function') return byEventId(strategy)
  if (typeof strategy === 'object' && strategy !== null) {
    if ('header' in strategy && typeof strategy.header === 'string' && strategy.header !== '') {
      const name = strategy.header.toLowerCase()
      return byEventId((input) => {
        const value = input.headers[name]
        return typeof value === 'string' ? value : undefined
      })
    }
    if ('bodyField' in strategy && typeof strategy.bodyField === 'string' && strategy.bodyField !== '') {
      const path = strategy.bodyField.split('.')
      return byEventId((input) => readPath(input.json(), path))
    }
  }
  throw new errors.INVALID_OPTIONS('idempotency must be "signature", "payload", "provider", { header }, { bodyField } or a function')
}
