import type { JobsOptions } from 'bullmq'
import {
  DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_PREFIX, DEFAULT_QUEUE_NAME, DEFAULT_RETENTION, DEFAULT_RETRY_SCHEDULE
} from '../shared/constants.js'
import { BACKOFF_TYPE, attemptsFor } from './retry.js'
import type { Static } from '@sinclair/typebox'
import type { RetentionSchema } from '../shared/schemas.js'

/** Retention with every field set. `deadAgeSeconds` 0 keeps dead letters until they are removed by hand. */
export type Retention = Required<Static<typeof RetentionSchema>>

/**
 * Dead letters must outlive the failed jobs they copy, or the sweep, which re-reads recent failures, could
 * write one again. The problem as one line, or undefined.
 */
export function deadLetterRetentionProblem (retention: Pick<Retention, 'failedAgeSeconds' | 'deadAgeSeconds'>): string | undefined {
  const { failedAgeSeconds, deadAgeSeconds } = retention
  if (deadAgeSeconds === 0 || deadAgeSeconds > failedAgeSeconds) return undefined
  return `must be 0 or more than the failed jobs' age (${failedAgeSeconds} s), so dead letters outlive failed jobs`
}

/** Where the queue lives and how its jobs behave; ingress, worker and replay must agree on name and prefix. */
export interface QueueSettings {
  queueName: string
  prefix: string
  dedupeWindowMs: number
  retrySchedule: readonly number[]
  retention: Retention
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = Object.freeze({
  queueName: DEFAULT_QUEUE_NAME,
  prefix: DEFAULT_PREFIX,
  dedupeWindowMs: DEFAULT_DEDUPE_WINDOW_MS,
  retrySchedule: DEFAULT_RETRY_SCHEDULE,
  retention: DEFAULT_RETENTION
})

/** BullMQ's `KeepJobs`, both fields set. */
interface KeepJobs { age: number, count: number }

/** The retention fields that are jobs' options (the rest, `deadAgeSeconds`, is the dead letters'). */
export const JOB_RETENTION = ['completedAgeSeconds', 'completedCount', 'failedAgeSeconds', 'failedCount'] as const

/** Retention as BullMQ keeps jobs: completed and failed, each by age and count. */
function keepJobs (retention: Retention): { removeOnComplete: KeepJobs, removeOnFail: KeepJobs } {
  return {
    removeOnComplete: { age: retention.completedAgeSeconds, count: retention.completedCount },
    removeOnFail: { age: retention.failedAgeSeconds, count: retention.failedCount }
  }
}

/**
 * The default retention, which `createWorker` hands to BullMQ's Worker: BullMQ applies a worker's
 * `removeOnComplete` / `removeOnFail` to every job that finishes without options of its own.
 */
export const DEFAULT_KEEP_JOBS = (() => {
  const { removeOnComplete, removeOnFail } = keepJobs(DEFAULT_RETENTION)
  return Object.freeze({ removeOnComplete: Object.freeze(removeOnComplete), removeOnFail: Object.freeze(removeOnFail) })
})()

/**
 * The BullMQ options every webhook job gets, whether it came in over HTTP, from `enqueue` or from replay.
 * Retention is on the job only when it is not the default, which the worker applies (above): options are
 * stored with every job, so a default spelt out on each costs Redis memory and CPU for nothing.
 */
export function jobOptions (settings: QueueSettings): JobsOptions {
  const attempts = attemptsFor(settings.retrySchedule)
  const backoff = { type: BACKOFF_TYPE }
  const { retention } = settings
  if (JOB_RETENTION.every((field) => retention[field] === DEFAULT_RETENTION[field])) return { attempts, backoff }
  return { attempts, backoff, ...keepJobs(retention) }
}
