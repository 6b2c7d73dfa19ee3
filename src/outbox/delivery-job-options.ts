/**
 * What `deliveryJobOptions` may change. A delivery job's id (`message.endpoint`) is the outbox's dedupe: a message
 * fanned out again (its dispatcher died within the lease, or a fan-out is retried) adds nothing while the first
 * job exists. Options that remove a finished job sooner than that, or that give it another id or dedupe key, would
 * deliver the message twice: they are refused at start.
 */
import type { JobsOptions } from 'bullmq'
import { dispatchDelay, type DispatchRetry } from './dispatcher.js'

/** Options that replace the pair's id as the dedupe, or tie the job to another: never given by hand. */
const REFUSED = ['jobId', 'deduplication', 'debounce', 'parent', 'repeat', 'repeatJobKey'] as const

/** A count of finished jobs below this pushes out, in a burst, jobs whose ids still have to dedupe. The default's. */
export const MIN_KEPT_COUNT = 100_000

/**
 * How long after its first fan-out a message may be fanned out again, in seconds: each dispatch attempt may hold
 * its lease and die, and a failed one waits its backoff before the next.
 */
export function dispatchWindowSeconds (leaseMs: number, retry: DispatchRetry): number {
  let ms = leaseMs * retry.attempts
  for (let attempt = 1; attempt < retry.attempts; attempt++) ms += dispatchDelay(attempt, retry)
  return Math.ceil(ms / 1000)
}

function keptProblem (name: 'removeOnComplete' | 'removeOnFail', value: unknown, windowSeconds: number): string | undefined {
  if (value === undefined || value === false) return undefined
  const keep = `keep them at least the dispatch window, { age: ${windowSeconds} } or more (seconds) and no count below ${MIN_KEPT_COUNT}`
  const why = `a finished delivery job's id dedupes a second fan-out of its message, so a job removed sooner is delivered again: ${keep}`
  if (typeof value !== 'object' || value === null) return `deliveryJobOptions.${name}: ${JSON.stringify(value)} removes finished jobs by count or at once; ${why}`
  const { age, count } = value as { age?: unknown, count?: unknown }
  if (typeof age !== 'number' || age < windowSeconds) return `deliveryJobOptions.${name}.age: ${String(age)} s is shorter than the dispatch window (${windowSeconds} s); ${why}`
  if (count !== undefined && (typeof count !== 'number' || count < MIN_KEPT_COUNT)) return `deliveryJobOptions.${name}.count: ${String(count)} is below ${MIN_KEPT_COUNT}; ${why}`
  return undefined
}

/** The first option that would break the dedupe of delivery jobs, as one line, or undefined. */
export function deliveryJobOptionsProblem (options: JobsOptions | undefined, windowSeconds: number): string | undefined {
  if (options === undefined) return undefined
  for (const name of REFUSED) {
    if (name in options) return `deliveryJobOptions.${name}: a delivery job's id (its message and endpoint) is its dedupe; this option would replace or bypass it`
  }
  return keptProblem('removeOnComplete', options.removeOnComplete, windowSeconds) ?? keptProblem('removeOnFail', options.removeOnFail, windowSeconds)
}
