/** How the CLI's settings become `createWorker`'s options: one mapping, for `anvil worker` and `anvil dev` alike. */
import type { Telemetry } from '../../src/queue/telemetry.js'
import type { WorkerOptions } from '../../src/worker/worker-options.js'
import { journalOptionsOf, type CommonConfig, type RetentionConfig, type StallConfig, type WorkerConfig } from './load-config.js'

/** Everything but the logger, which each command brings (its own, or the app's through the plugin). */
export function workerOptions (
  config: CommonConfig & WorkerConfig & RetentionConfig & Partial<StallConfig>, redis: string, telemetry: Telemetry | undefined
): Omit<WorkerOptions, 'logger'> {
  return {
    redis,
    queueName: config.queueName,
    prefix: config.prefix,
    concurrency: config.concurrency,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
    deadAgeSeconds: config.retention?.deadAgeSeconds,
    telemetry,
    journal: config.journal === undefined ? undefined : journalOptionsOf(config.journal),
    consoleUrl: config.consoleUrl
  }
}
