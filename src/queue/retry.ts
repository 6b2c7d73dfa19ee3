/**
 * The one retry model, inbound and outbound: a job carries its schedule (the delays, ms, after its first try) in
 * its data, its attempts are the first try plus one per delay, and the worker's backoff reads the delay there,
 * so a worker never disagrees with whoever made the job. The schedule is checked by its TypeBox schema
 * (`RetrySchedule`, src/shared/schemas.ts) where the options are.
 */

/** The backoff type Anvil puts on its inbound jobs; the worker's strategy answers for it. */
export const BACKOFF_TYPE = 'anvil-schedule'

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
