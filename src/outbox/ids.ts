import { randomBytes } from 'node:crypto'

/** Caller-given message ids: safe in a BullMQ job id (no ':'), a URL path and a log line. */
export const MESSAGE_ID_PATTERN = '^[A-Za-z0-9_.~-]{1,128}$'
export const ENDPOINT_ID_PATTERN = '^ep_[0-9a-f]{28}$'

/** A prefix, the creation time in fixed-width hex (so ids sort by age), then 64 random bits. */
export function newId (prefix: string): string {
  return `${prefix}_${Date.now().toString(16).padStart(12, '0')}${randomBytes(8).toString('hex')}`
}

/** `whsec_` and the base64 of 32 random bytes, as Standard Webhooks writes a secret. */
export function newSecret (): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}
