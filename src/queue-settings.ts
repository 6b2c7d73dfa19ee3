import type { JobsOptions } from 'bullmq'
import {
  DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_PREFIX, DEFAULT_QUEUE_NAME, DEFAULT_RETENTION, DEFAULT_RETRY_SCHEDULE
} from './constants.js'
import { BACKOFF_TYPE, attemptsFor } from './retry.js'
import { Type } from '@sinclair/typebox'

export interface Retention {
  completedAgeSeconds: number
  completedCount: number
  failedAgeSeconds: number
  failedCount: number
  /** 0 keeps dead letters until they are removed by hand. */
  deadAgeSeconds: number
}

/** Retention as given: every field optional, the defaults fill in the rest. */
export const RetentionSchema = Type.Object({
  completedAgeSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
  completedCount: Type.Optional(Type.Integer({ minimum: 0 })),
  failedAgeSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
  failedCount: Type.Optional(Type.Integer({ minimum: 0 })),
  deadAgeSeconds: Type.Optional(Type.Integer({ minimum: 0 }))
}, { additionalProperties: false })

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
 * Retention is on the job only when it is not the default, which the worker applies (above): the options are
 * stored with every job, and the default retention on each cost about 100 bytes of Redis and 2 to 4 µs of
 * Redis and Node CPU per job (bench/job-cost.mjs, on two machines).
 */
export function jobOptions (settings: QueueSettings): JobsOptions {
  const attempts = attemptsFor(settings.retrySchedule)
  const backoff = { type: BACKOFF_TYPE }
  const { retention } = settings
  if (JOB_RETENTION.every((field) => retention[field] === DEFAULT_RETENTION[field])) return { attempts, backoff }
  return { attempts, backoff, ...keepJobs(retention) }
}
