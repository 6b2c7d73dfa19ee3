import { errors } from '../shared/errors.js'
import { MAX_RETRY_STEP_MS } from '../shared/schemas.js'

/** The backoff type Anvil puts on its jobs; the worker's strategy answers for it. */
export const BACKOFF_TYPE = 'anvil-schedule'

/** Checks a schedule of retry delays (ms): whole, non-negative, at most a day per step. */
export function validateSchedule (schedule: unknown): readonly number[] {
  if (!Array.isArray(schedule) || schedule.some((d) => !Number.isInteger(d) || d < 0 || d > MAX_RETRY_STEP_MS)) {
    throw new errors.INVALID_OPTIONS(`retry schedule must be a list of whole milliseconds from 0 to ${MAX_RETRY_STEP_MS}`)
  }
  return Object.freeze([...schedule])
}

/** A schedule of N delays means the first attempt plus N retries. */
export function attemptsFor (schedule: readonly number[]): number {
  return schedule.length + 1
}

/**
 * The delay before the retry that follows attempt `attemptsMade` (1-based), or -1 for none.
 * BullMQ reads 0 as "retry now", so the end of the schedule must be -1, never 0.
 */
export function delayAfter (schedule: readonly number[], attemptsMade: number): number {
  const delay = schedule[attemptsMade - 1]
  return delay === undefined ? -1 : delay
}
