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

/** The BullMQ options every webhook job gets, whether it came in over HTTP, from `enqueue` or from replay. */
export function jobOptions (settings: QueueSettings): JobsOptions {
  const { retention } = settings
  return {
    attempts: attemptsFor(settings.retrySchedule),
    backoff: { type: BACKOFF_TYPE },
    removeOnComplete: { age: retention.completedAgeSeconds, count: retention.completedCount },
    removeOnFail: { age: retention.failedAgeSeconds, count: retention.failedCount }
  }
}
