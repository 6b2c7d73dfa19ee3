/** The CLI's own defaults and the values some settings take, named once. */
export const DEFAULT_PORT = 3000
/** `anvil serve` runs in containers, where only 0.0.0.0 is reachable from outside. */
export const DEFAULT_SERVE_HOST = '0.0.0.0'
/** `anvil dev` runs on a laptop: never expose it on the network by default. */
export const DEFAULT_DEV_HOST = '127.0.0.1'
export const DEFAULT_LOG_LEVEL = 'info'
/** BullMQ's own lock duration and stalled-job interval, which apply when neither is set. */
export const BULLMQ_STALL_DEFAULT_MS = 30_000
/** How long a client has to send a whole request (headers and body) before it gets 408 and is closed. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
/** `ANVIL_METRICS_PATH=off`: no metrics route. */
export const METRICS_OFF = 'off'
/** `ANVIL_TRACING`: off (the default: no OpenTelemetry module is loaded) or OTLP over HTTP. */
export const TRACING_MODES = ['off', 'otlp'] as const
export type TracingMode = (typeof TRACING_MODES)[number]
/** `anvil worker --role`: the queued inbound webhooks, the outgoing side (dispatch, delivery, outbox retention), or both. */
export const WORKER_ROLES = ['all', 'inbound', 'outbound'] as const
export type WorkerRole = (typeof WORKER_ROLES)[number]
/** Read by the OpenTelemetry SDK itself when ANVIL_TRACING=otlp (cli/tracing.ts). */
export const TRACING_ENV_VARS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_SERVICE_NAME', 'OTEL_RESOURCE_ATTRIBUTES'
] as const
/** The secret `anvil dev` uses when WEBHOOK_SECRET is unset; it is public, so it protects nothing. */
export const DEV_SECRET = 'whsec_dev'
/** `ANVIL_RETRY_SCHEDULE=none`: one attempt, no retries (an empty variable means "use the default"). */
export const NO_RETRIES = 'none'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
