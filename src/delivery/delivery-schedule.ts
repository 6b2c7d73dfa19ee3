/**
 * When a failed delivery is tried again: the schedule the job carries (the publisher's `retrySchedule`,
 * Standard Webhooks' by default; src/queue/retry.ts is the one model, inbound and outbound), each delay
 * jittered ±20 % so endpoints that failed together do not retry together; a receiver's `Retry-After` (429, 503)
 * pushes the next try back, up to a bound.
 */
import { Type, type Static } from '@sinclair/typebox'
import { MAX_RETRIES, MAX_RETRY_STEP_MS, RetrySchedule, Whole } from '../shared/schemas.js'
import { attemptsFor, delayAfter } from '../queue/retry.js'

/** The backoff type on delivery jobs; the delivery worker's strategy answers for it. */
export const OUTBOUND_BACKOFF_TYPE = 'anvil-outbound'

/** After the immediate try: 5 s, 5 m, 30 m, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (Standard Webhooks 1.0). */
export const STANDARD_WEBHOOKS_SCHEDULE_MS: readonly number[] = Object.freeze([
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000
])
export const DEFAULT_JITTER = 0.2
/** The most jitter a delivery worker takes: a delay moved by up to its whole length either way. */
export const MAX_JITTER = 1
/** The longest a `Retry-After` may push a retry back. */
export const DEFAULT_RETRY_AFTER_MAX_MS = 3_600_000
/**
 * The longest a delivery job can wait for its next try, whatever its schedule and the delivery worker's options:
 * a step is at most a day, the most jitter doubles it, and `retryAfterMaxMs` is at most a day too.
 */
export const MAX_RETRY_WAIT_MS = MAX_RETRY_STEP_MS * (1 + MAX_JITTER)

/**
 * `'standard-webhooks'`, a list of delays (ms) after the first try, or `{ attempts, exponentialMs }`:
 * `{ attempts: 3, exponentialMs: 1000 }` tries three times in all, 1 s then 2 s apart.
 */
export const RetryScheduleSettingSchema = Type.Union([
  Type.Literal('standard-webhooks'),
  RetrySchedule(),
  Type.Object({ attempts: Whole(1, MAX_RETRIES + 1), exponentialMs: Whole(1, MAX_RETRY_STEP_MS) }, { additionalProperties: false })
])
export type RetryScheduleSetting = Static<typeof RetryScheduleSettingSchema>

/** The delays (ms) after the first try; an exponential schedule's steps are capped at a day. */
export function resolveSchedule (setting: RetryScheduleSetting = 'standard-webhooks'): readonly number[] {
  if (setting === 'standard-webhooks') return STANDARD_WEBHOOKS_SCHEDULE_MS
  if (Array.isArray(setting)) return Object.freeze([...setting])
  const { attempts, exponentialMs } = setting as { attempts: number, exponentialMs: number }
  return Object.freeze(Array.from({ length: attempts - 1 }, (_, i) => Math.min(exponentialMs * 2 ** i, MAX_RETRY_STEP_MS)))
}

/** The BullMQ options a delivery job needs for a schedule: its first try plus one per delay. */
export function deliveryJobOptions (schedule: readonly number[]): { attempts: number, backoff: { type: string } } {
  return { attempts: attemptsFor(schedule), backoff: { type: OUTBOUND_BACKOFF_TYPE } }
}

/**
 * The schedule a delivery job is retried on: the one it carries. A job made before jobs carried one (its data
 * has no `retry`) gets Standard Webhooks', the default it was most likely made with, its last step repeated
 * for as many attempts as the job was given, so it is neither cut short nor retried past them.
 */
export function scheduleOf (job: { data: { retry?: readonly number[] }, opts: { attempts?: number } }): readonly number[] {
  if (Array.isArray(job.data.retry)) return job.data.retry
  const retries = Math.max(0, (job.opts.attempts ?? 1) - 1)
  const last = STANDARD_WEBHOOKS_SCHEDULE_MS[STANDARD_WEBHOOKS_SCHEDULE_MS.length - 1] as number
  return Array.from({ length: retries }, (_, i) => STANDARD_WEBHOOKS_SCHEDULE_MS[i] ?? last)
}

export interface DelayOptions {
  jitter?: number
  /** The receiver's `Retry-After`, when it gave one. */
  retryAfterMs?: number
  retryAfterMaxMs?: number
  random?: () => number
}

/**
 * The delay (ms) before the retry that follows attempt `attemptsMade` (1-based), or -1 for none (BullMQ
 * reads 0 as "now"). A `Retry-After` is honoured when it asks for longer than the schedule, up to its bound.
 */
export function nextDelay (schedule: readonly number[], attemptsMade: number, options: DelayOptions = {}): number {
  const base = delayAfter(schedule, attemptsMade)
  if (base < 0) return -1
  const jitter = options.jitter ?? DEFAULT_JITTER
  const random = options.random ?? Math.random
  const scheduled = Math.round(base * (1 - jitter + 2 * jitter * random()))
  const asked = Math.min(options.retryAfterMs ?? 0, options.retryAfterMaxMs ?? DEFAULT_RETRY_AFTER_MAX_MS)
  return Math.max(scheduled, asked)
}
