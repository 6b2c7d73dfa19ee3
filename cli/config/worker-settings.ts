/** The settings of the worker: how many jobs at once, stalls, shutdown, its role, and the jobs' retention. */
import { Type, type TInteger } from '@sinclair/typebox'
import { RetentionSchema } from '../../src/shared/schemas.js'
import { workerSettings } from '../../src/worker/worker-options.js'
import { DEFAULT_CONCURRENCY, DEFAULT_RETENTION, DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../../src/shared/constants.js'
import { define, whole, type Setting } from './setting.js'
import { BULLMQ_STALL_DEFAULT_MS, WORKER_ROLES } from './cli-constants.js'

/** The `retention` option's field (its schema and default) in `unit`; the commander key is the flag camel-cased, as commander names it. */
function retentionSetting (
  field: keyof typeof DEFAULT_RETENTION, env: string, flag: string, unit: string, description: string, note = ''
): Setting<TInteger> {
  const key = flag.slice(2).replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase())
  const read = whole(RetentionSchema.properties[field], unit)
  return define({
    env, key, flag, value: unit === 'jobs' ? '<n>' : '<s>', description, default: String(DEFAULT_RETENTION[field]), ...read, expected: read.expected + note
  })
}

export const WORKER_SETTINGS = {
  concurrency: define({
    env: 'WORKER_CONCURRENCY', key: 'concurrency', flag: '--concurrency', value: '<n>', fallback: DEFAULT_CONCURRENCY,
    description: 'jobs processed at once', ...whole(workerSettings.concurrency)
  }),
  shutdownTimeoutMs: define({
    env: 'ANVIL_SHUTDOWN_TIMEOUT_MS', key: 'shutdownTimeoutMs', flag: '--shutdown-timeout-ms', value: '<ms>',
    fallback: DEFAULT_SHUTDOWN_TIMEOUT_MS, description: 'how long shutdown waits for active jobs',
    ...whole(workerSettings.shutdownTimeoutMs, 'milliseconds')
  }),
  // BullMQ's stalled-job detection (worker only); unset keeps BullMQ's defaults.
  lockDurationMs: define({
    env: 'ANVIL_LOCK_DURATION_MS', key: 'lockDurationMs', flag: '--lock-duration-ms', value: '<ms>',
    default: String(BULLMQ_STALL_DEFAULT_MS), defaultShown: `BullMQ's, ${BULLMQ_STALL_DEFAULT_MS}`,
    description: "a job's lock, renewed while it runs; once it expires the job is taken back as stalled",
    ...whole(workerSettings.lockDurationMs, 'milliseconds')
  }),
  stalledIntervalMs: define({
    env: 'ANVIL_STALLED_INTERVAL_MS', key: 'stalledIntervalMs', flag: '--stalled-interval-ms', value: '<ms>',
    default: String(BULLMQ_STALL_DEFAULT_MS), defaultShown: `BullMQ's, ${BULLMQ_STALL_DEFAULT_MS}`,
    description: 'how often stalled jobs are looked for', ...whole(workerSettings.stalledIntervalMs, 'milliseconds')
  }),
  role: define({
    env: 'ANVIL_WORKER_ROLE', key: 'role', flag: '--role', value: '<role>', fallback: 'all',
    description: 'inbound: only the queued webhooks (the handler, forwarding); outbound: only the outbox (dispatch, delivery, retention), which needs ANVIL_DATABASE_URL; all: whichever is configured',
    expected: 'all, inbound or outbound', schema: Type.Union(WORKER_ROLES.map((role) => Type.Literal(role)))
  }),
  // Retention, as the plugin's `retention` option (src/shared/schemas.ts): the same names, the same schemas.
  completedAgeSeconds: retentionSetting('completedAgeSeconds', 'ANVIL_RETENTION_COMPLETED_AGE_SECONDS', '--retention-completed-age-seconds',
    'seconds', 'keep completed jobs this long'),
  completedCount: retentionSetting('completedCount', 'ANVIL_RETENTION_COMPLETED_COUNT', '--retention-completed-count',
    'jobs', 'keep at most this many completed jobs'),
  failedAgeSeconds: retentionSetting('failedAgeSeconds', 'ANVIL_RETENTION_FAILED_AGE_SECONDS', '--retention-failed-age-seconds',
    'seconds', 'keep finally-failed jobs this long'),
  failedCount: retentionSetting('failedCount', 'ANVIL_RETENTION_FAILED_COUNT', '--retention-failed-count',
    'jobs', 'keep at most this many failed jobs'),
  deadAgeSeconds: retentionSetting('deadAgeSeconds', 'ANVIL_RETENTION_DEAD_AGE_SECONDS', '--retention-dead-age-seconds',
    'seconds', 'keep dead letters this long, 0 for ever; more than the failed age', ' (0 keeps dead letters)')
}
