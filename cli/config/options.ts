import type { Command } from 'commander'

/**
 * Flags mirror the environment variables and win over them (cli/config/load-config.ts checks both the same way).
 * There is no flag for the secret: it would show in `ps` and in shell history.
 */
export function addSharedOptions (command: Command): Command {
  return command
    .option('--redis-url <url>', 'Redis URL: redis://, rediss://, or redis+cluster://host:port,host:port (env REDIS_URL)')
    .option('--queue <name>', 'queue name (env ANVIL_QUEUE)')
    .option('--prefix <prefix>', 'BullMQ key prefix (env ANVIL_PREFIX)')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (env LOG_LEVEL)')
}

export function addIngressOptions (command: Command): Command {
  return command
    .option('--host <host>', 'address to listen on (env HOST)')
    .option('--port <port>', 'port to listen on (env PORT)')
    .option('--path <path>', 'webhook route (env ANVIL_PATH)')
    .option('--body-limit <bytes>', 'largest accepted body (env ANVIL_BODY_LIMIT)')
    .option('--dedupe-window-ms <ms>', 'how long a delivery is remembered (env ANVIL_DEDUPE_WINDOW_MS)')
    .option('--retry-schedule <list>', 'retry delays in ms, e.g. 1000,5000,30000, or none (env ANVIL_RETRY_SCHEDULE)')
    .option('--idempotency <strategy>', 'signature, payload, header:<name> or body:<field> (env ANVIL_IDEMPOTENCY)')
    .option('--config <file>', 'JSON or YAML sources file, { "sources": [...] }, one per provider (env ANVIL_CONFIG)')
}

export function addWorkerOptions (command: Command): Command {
  return command
    .option('--concurrency <n>', 'jobs processed at once (env WORKER_CONCURRENCY)')
    .option('--shutdown-timeout-ms <ms>', 'how long shutdown waits for active jobs (env ANVIL_SHUTDOWN_TIMEOUT_MS)')
}

/** `worker` only: BullMQ's stalled-job detection, for jobs a dead or forced-off worker left active. */
export function addStallOptions (command: Command): Command {
  return command
    .option('--lock-duration-ms <ms>', 'a job\'s lock, renewed while it runs; once it expires the job is taken back as stalled (env ANVIL_LOCK_DURATION_MS)')
    .option('--stalled-interval-ms <ms>', 'how often stalled jobs are looked for (env ANVIL_STALLED_INTERVAL_MS)')
}

/** `serve` and `dev`: how long finished jobs (stamped on each job, when not the default) and dead letters stay in Redis. */
export function addRetentionOptions (command: Command): Command {
  return addDeadLetterRetentionOptions(command
    .option('--retention-completed-age-seconds <s>', 'keep completed jobs this long (env ANVIL_RETENTION_COMPLETED_AGE_SECONDS)')
    .option('--retention-completed-count <n>', 'keep at most this many completed jobs (env ANVIL_RETENTION_COMPLETED_COUNT)')
    .option('--retention-failed-count <n>', 'keep at most this many failed jobs (env ANVIL_RETENTION_FAILED_COUNT)'))
}

/** `worker`: dead letters are its to prune; the failed jobs' age is read to check that they outlive them. */
export function addDeadLetterRetentionOptions (command: Command): Command {
  return command
    .option('--retention-failed-age-seconds <s>', 'keep finally-failed jobs this long (env ANVIL_RETENTION_FAILED_AGE_SECONDS)')
    .option('--retention-dead-age-seconds <s>', 'keep dead letters this long, 0 for ever; more than the failed age (env ANVIL_RETENTION_DEAD_AGE_SECONDS)')
}

/** For the long-running commands: where health and metrics are served. */
export function addObservabilityOptions (command: Command): Command {
  return command
    .option('--metrics-path <path>', 'Prometheus metrics route, or off (env ANVIL_METRICS_PATH)')
    .option('--metrics-port <port>', 'serve metrics on this port instead of the main one (env ANVIL_METRICS_PORT)')
    .option('--tracing <mode>', 'off, or otlp: OpenTelemetry spans to OTEL_EXPORTER_OTLP_ENDPOINT (env ANVIL_TRACING)')
    .option('--log-payloads <bool>', 'true: log payloads instead of redacting them (env ANVIL_LOG_PAYLOADS)')
}

/** `anvil worker` listens too: health probes and metrics. */
export function addWorkerHttpOptions (command: Command): Command {
  return command
    .option('--host <host>', 'address of the health and metrics server (env HOST)')
    .option('--port <port>', 'port of the health and metrics server (env PORT)')
}
