import type { Command } from 'commander'

/**
 * Flags mirror the environment variables and win over them (src/config.ts checks both the same way).
 * There is no flag for the secret: it would show in `ps` and in shell history.
 */
export function addSharedOptions (command: Command): Command {
  return command
    .option('--redis-url <url>', 'Redis URL, redis:// or rediss:// (env REDIS_URL)')
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
}

export function addWorkerOptions (command: Command): Command {
  return command
    .option('--concurrency <n>', 'jobs processed at once (env WORKER_CONCURRENCY)')
    .option('--shutdown-timeout-ms <ms>', 'how long shutdown waits for active jobs (env ANVIL_SHUTDOWN_TIMEOUT_MS)')
}
