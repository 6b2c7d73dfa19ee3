/**
 * The CLI's settings table: every environment variable and flag, and what it must be (how a row is read:
 * cli/config/setting.ts); secrets are never quoted back. The loaders that group settings per command are in
 * cli/config/load-config.ts.
 */
import { Type, type TInteger } from '@sinclair/typebox'
import { redactUrl, redisUrlProblem } from '../../src/redis/connect.js'
import { databaseUrlProblem } from '../../src/db/database-url.js'
import { ConsoleUrl, MAX_RETRY_STEP_MS, PREFIX_PATTERN, PREFIX_RULE, RetentionSchema, RetrySchedule, SCHEMA_NAME_RULE, SchemaName, Whole } from '../../src/shared/schemas.js'
import { workerSettings } from '../../src/worker/worker-options.js'
import { GroupCommitSchema, JournalOptionsSchema } from '../../src/journal/journal-options.js'
import { ingressProperties } from '../../src/inbound/ingress-options.js'
import { MIN_SECRET_BYTES } from '../../src/signing/secret-problem.js'
import { netsProblem } from '../../src/delivery/cidr.js'
import { DEFAULT_DISPATCH_RETRY, DEFAULT_OUTBOX_RETENTION_DAYS, DispatchOptionsSchema, OutboundOptionsSchema } from '../../src/outbox/outbound-options.js'
import { STANDARD_WEBHOOKS_SCHEDULE_MS } from '../../src/delivery/delivery-schedule.js'
import { MIN_ADMIN_TOKEN_LENGTH } from '../../src/shared/constants.js'
import { FrameAncestors, PortalPublicUrl } from '../../src/portal/portal-options.js'
import { define, toInteger, whole, type Setting } from './setting.js'
import {
  DEFAULT_BODY_LIMIT, DEFAULT_CONCURRENCY, DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_METRICS_PATH, DEFAULT_PATH, DEFAULT_PREFIX,
  DEFAULT_DB_SCHEMA, DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_QUEUE_NAME, DEFAULT_REDIS_URL, DEFAULT_RETENTION, DEFAULT_RETRY_SCHEDULE,
  DEFAULT_SHUTDOWN_TIMEOUT_MS, MAX_BODY_LIMIT
} from '../../src/shared/constants.js'

export { DEFAULT_METRICS_PATH }
export { nameOf, read, type Env, type Flags } from './setting.js'
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

/** How a list of networks for the SSRF guard is read (ANVIL_OUTBOUND_ALLOW_NETS, ANVIL_FORWARD_ALLOW_NETS). */
const allowNets = {
  expected: 'comma-separated networks such as 127.0.0.0/8,10.0.0.0/8',
  schema: Type.String({ minLength: 1 }),
  breaks: (nets: string): string | undefined => {
    const problem = netsProblem(nets)
    return problem === undefined ? undefined : `must be comma-separated networks (${problem})`
  }
}

function toSchedule (raw: string): unknown {
  if (raw.trim() === NO_RETRIES) return []
  return raw.split(',').map(toInteger)
}

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

const REDIS_URL_EXPECTED = 'a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL'
const DATABASE_URL_EXPECTED = 'a postgres:// or postgresql:// URL'

export const SETTINGS = {
  redisUrl: define({
    env: 'REDIS_URL', key: 'redisUrl', flag: '--redis-url', value: '<url>', default: DEFAULT_REDIS_URL,
    description: 'Redis URL: redis://, rediss://, or redis+cluster://host:port,host:port',
    expected: REDIS_URL_EXPECTED,
    schema: Type.String({ minLength: 1 }),
    // src/redis/connect.ts owns the URL rule; a password is never quoted back.
    breaks: (url) => redisUrlProblem(url) === undefined ? undefined : `must be ${REDIS_URL_EXPECTED}`,
    show: redactUrl
  }),
  queueName: define({
    env: 'ANVIL_QUEUE', key: 'queue', flag: '--queue', value: '<name>', default: DEFAULT_QUEUE_NAME,
    description: 'queue name', expected: 'a queue name without ":"', schema: workerSettings.queueName
  }),
  prefix: define({
    env: 'ANVIL_PREFIX', key: 'prefix', flag: '--prefix', value: '<prefix>', default: DEFAULT_PREFIX,
    description: 'BullMQ key prefix', expected: 'a non-empty key prefix', schema: Type.String({ minLength: 1 }),
    breaks: (prefix) => new RegExp(PREFIX_PATTERN).test(prefix) ? undefined : `must be a key prefix ${PREFIX_RULE}`
  }),
  logLevel: define({
    env: 'LOG_LEVEL', key: 'logLevel', flag: '--log-level', value: '<level>', default: DEFAULT_LOG_LEVEL,
    description: LOG_LEVELS.join(', '), expected: `one of ${LOG_LEVELS.join(', ')}`,
    schema: Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)))
  }),
  host: define({
    env: 'HOST', key: 'host', flag: '--host', value: '<host>', default: DEFAULT_SERVE_HOST,
    description: 'address to listen on',
    expected: 'a host name or IP address', schema: Type.String({ pattern: '^\\S+$' })
  }),
  port: define({
    env: 'PORT', key: 'port', flag: '--port', value: '<port>', default: String(DEFAULT_PORT),
    description: 'port to listen on',
    ...whole(Whole(0, 65535))
  }),
  path: define({
    env: 'ANVIL_PATH', key: 'path', flag: '--path', value: '<path>', default: DEFAULT_PATH,
    description: 'webhook route', expected: 'a URL path starting with "/"', schema: Type.String({ pattern: '^/\\S*$' })
  }),
  bodyLimit: define({
    env: 'ANVIL_BODY_LIMIT', key: 'bodyLimit', flag: '--body-limit', value: '<bytes>',
    default: String(DEFAULT_BODY_LIMIT), defaultShown: `${DEFAULT_BODY_LIMIT} (1 MiB)`,
    // No maximum in the schema: past the safe integers too, the rule below says what the most is.
    description: 'largest accepted body', expected: 'a whole number of bytes, at least 1', schema: Type.Integer({ minimum: 1 }), parse: toInteger,
    breaks: (bytes) => bytes > MAX_BODY_LIMIT ? `must be at most ${MAX_BODY_LIMIT} bytes (1 GiB)` : undefined
  }),
  requestTimeoutMs: define({
    env: 'ANVIL_REQUEST_TIMEOUT_MS', key: 'requestTimeoutMs', flag: '--request-timeout-ms', value: '<ms>',
    default: String(DEFAULT_REQUEST_TIMEOUT_MS), description: 'a request not complete in this long gets 408 and is closed',
    ...whole(Whole(1), 'milliseconds')
  }),
  maxInFlightBytes: define({
    env: 'ANVIL_MAX_IN_FLIGHT_BYTES', key: 'maxInFlightBytes', flag: '--max-in-flight-bytes', value: '<bytes>',
    default: String(DEFAULT_MAX_IN_FLIGHT_BYTES), defaultShown: `${DEFAULT_MAX_IN_FLIGHT_BYTES} (64 MiB)`,
    description: 'bodies read at once, by Content-Length; past it 503',
    ...whole(Whole(1), 'bytes')
  }),
  dedupeWindowMs: define({
    env: 'ANVIL_DEDUPE_WINDOW_MS', key: 'dedupeWindowMs', flag: '--dedupe-window-ms', value: '<ms>',
    default: String(DEFAULT_DEDUPE_WINDOW_MS), defaultShown: `${DEFAULT_DEDUPE_WINDOW_MS} (72 h)`,
    description: 'how long a delivery is remembered', ...whole(ingressProperties.dedupeWindowMs, 'milliseconds')
  }),
  retrySchedule: define({
    env: 'ANVIL_RETRY_SCHEDULE', key: 'retrySchedule', flag: '--retry-schedule', value: '<list>',
    default: DEFAULT_RETRY_SCHEDULE.join(','), description: `retry delays in ms, e.g. 1000,5000,30000, or ${NO_RETRIES}`,
    expected: `comma-separated whole milliseconds from 0 to ${MAX_RETRY_STEP_MS} (e.g. 1000,5000,30000), or "${NO_RETRIES}"`,
    schema: ingressProperties.retrySchedule, parse: toSchedule
  }),
  idempotency: define({
    env: 'ANVIL_IDEMPOTENCY', key: 'idempotency', flag: '--idempotency', value: '<strategy>', default: 'signature',
    description: 'the dedupe key: signature, payload, header:<name> or body:<field>',
    expected: 'signature, payload, header:<name> or body:<field>',
    schema: Type.String({ pattern: "^(signature|payload|header:[A-Za-z0-9!#$%&'*+.^_`|~-]+|body:[^\\s.]+(\\.[^\\s.]+)*)$" })
  }),
  concurrency: define({
    env: 'WORKER_CONCURRENCY', key: 'concurrency', flag: '--concurrency', value: '<n>', default: String(DEFAULT_CONCURRENCY),
    description: 'jobs processed at once', ...whole(workerSettings.concurrency)
  }),
  shutdownTimeoutMs: define({
    env: 'ANVIL_SHUTDOWN_TIMEOUT_MS', key: 'shutdownTimeoutMs', flag: '--shutdown-timeout-ms', value: '<ms>',
    default: String(DEFAULT_SHUTDOWN_TIMEOUT_MS), description: 'how long shutdown waits for active jobs',
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
  metricsPath: define({
    env: 'ANVIL_METRICS_PATH', key: 'metricsPath', flag: '--metrics-path', value: '<path>', default: DEFAULT_METRICS_PATH,
    description: `Prometheus metrics route, or ${METRICS_OFF}`, expected: `a URL path starting with "/", or "${METRICS_OFF}"`,
    schema: Type.String({ pattern: `^(${METRICS_OFF}|/\\S*)$` })
  }),
  metricsPort: define({
    env: 'ANVIL_METRICS_PORT', key: 'metricsPort', flag: '--metrics-port', value: '<port>',
    description: 'serve metrics on this port instead of the main one', ...whole(Whole(0, 65535))
  }),
  trustProxy: define({
    env: 'ANVIL_TRUST_PROXY', key: 'trustProxy', flag: '--trust-proxy', value: '<proxies>', default: 'false',
    description: 'the proxies in front whose X-Forwarded-For names the client (the console login limit counts per client): true, a hop count, or comma-separated networks',
    expected: 'true, false, a number of hops, or comma-separated networks of your proxies such as 10.0.0.0/8',
    schema: Type.Union([Type.Boolean(), Whole(1, 100), Type.String({ minLength: 1 })]),
    parse: (raw) => raw.trim() === 'true' ? true : raw.trim() === 'false' ? false : toInteger(raw),
    breaks: (value) => {
      if (typeof value !== 'string') return undefined
      const problem = netsProblem(value)
      return problem === undefined ? undefined : `must be true, false, a number of hops, or comma-separated networks (${problem})`
    }
  }),
  logPayloads: define({
    env: 'ANVIL_LOG_PAYLOADS', key: 'logPayloads', flag: '--log-payloads', value: '<bool>', default: 'false',
    description: 'true: log payloads instead of redacting them', expected: 'true or false',
    schema: Type.Union([Type.Literal('true'), Type.Literal('false')])
  }),
  tracing: define({
    env: 'ANVIL_TRACING', key: 'tracing', flag: '--tracing', value: '<mode>', default: 'off',
    description: 'off, or otlp: OpenTelemetry spans to OTEL_EXPORTER_OTLP_ENDPOINT', expected: TRACING_MODES.join(' or '),
    schema: Type.Union(TRACING_MODES.map((mode) => Type.Literal(mode)))
  }),
  allowShortSecrets: define({
    env: 'ANVIL_ALLOW_SHORT_SECRETS', key: 'allowShortSecrets', flag: '--allow-short-secrets', value: '<bool>', default: 'false',
    description: `true: accept secrets shorter than ${MIN_SECRET_BYTES} bytes (for development; anvil dev always does)`,
    expected: 'true or false', schema: Type.Union([Type.Literal('true'), Type.Literal('false')])
  }),
  config: define({
    env: 'ANVIL_CONFIG', key: 'config', flag: '--config', value: '<file>',
    description: 'JSON or YAML sources file, { "sources": [...] }, one per provider',
    expected: 'the path of a JSON or YAML sources file', schema: Type.String({ minLength: 1 })
  }),
  outboundAllowNets: define({
    env: 'ANVIL_OUTBOUND_ALLOW_NETS', key: 'outboundAllowNets', flag: '--outbound-allow-nets', value: '<cidrs>',
    description: 'networks the endpoints of outgoing webhooks may reach despite the SSRF guard (loopback, private…), comma-separated',
    ...allowNets
  }),
  // Apart from the endpoints' list: the forward URL is the operator's, an endpoint URL may be a customer's.
  forwardAllowNets: define({
    env: 'ANVIL_FORWARD_ALLOW_NETS', key: 'forwardAllowNets', flag: '--forward-allow-nets', value: '<cidrs>',
    description: 'networks forward mode may reach despite the SSRF guard (a Service CIDR), comma-separated',
    ...allowNets
  }),
  databaseUrl: define({
    env: 'ANVIL_DATABASE_URL', key: 'databaseUrl', flag: '--database-url', value: '<url>', description: 'PostgreSQL URL',
    expected: DATABASE_URL_EXPECTED, schema: Type.String({ minLength: 1 }),
    breaks: (url) => databaseUrlProblem(url) === undefined ? undefined : `must be ${DATABASE_URL_EXPECTED}`,
    show: redactUrl
  }),
  adminToken: define({
    // No flag: it would show in `ps` and in shell history, as the webhook secret would.
    env: 'ANVIL_ADMIN_TOKEN', key: 'adminToken', description: 'turns the admin API on; requests send it as a Bearer token',
    expected: `at least ${MIN_ADMIN_TOKEN_LENGTH} characters, none of them whitespace`, schema: Type.String({ pattern: `^\\S{${MIN_ADMIN_TOKEN_LENGTH},}$` }),
    show: (raw) => `${raw.length} characters`
  }),
  adminUrl: define({
    env: 'ANVIL_ADMIN_URL', key: 'url', flag: '--url', value: '<url>',
    description: 'the admin API to talk to (token: ANVIL_ADMIN_TOKEN), e.g. http://127.0.0.1:3000/admin; unset: Redis and PostgreSQL directly',
    expected: 'an http:// or https:// URL', schema: Type.String({ pattern: '^https?://\\S+$' }), show: redactUrl
  }),
  portalPublicUrl: define({
    env: 'ANVIL_PORTAL_PUBLIC_URL', key: 'portalPublicUrl', flag: '--portal-public-url', value: '<url>',
    description: "where tenant portal links start, e.g. https://hooks.example.com; unset: the minting request's origin",
    expected: 'an http(s) URL with no query or fragment', schema: PortalPublicUrl()
  }),
  portalFrameAncestors: define({
    env: 'ANVIL_PORTAL_FRAME_ANCESTORS', key: 'portalFrameAncestors', flag: '--portal-frame-ancestors', value: '<origins>',
    description: 'origins that may embed the tenant portal page in a frame, e.g. https://app.example.com; unset: none',
    expected: "comma-separated origins such as https://app.example (a leading *. allowed) or 'self'", schema: FrameAncestors(),
    parse: (raw) => raw.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  }),
  adminPort: define({
    env: 'ANVIL_ADMIN_PORT', key: 'adminPort', flag: '--admin-port', value: '<port>',
    description: 'serve the admin API on this port instead of the main one', ...whole(Whole(0, 65535))
  }),
  dbSchema: define({
    env: 'ANVIL_DB_SCHEMA', key: 'dbSchema', flag: '--db-schema', value: '<name>', default: DEFAULT_DB_SCHEMA,
    description: "the schema Anvil's tables live in", expected: SCHEMA_NAME_RULE, schema: SchemaName()
  }),
  consoleUrl: define({
    env: 'ANVIL_CONSOLE_URL', key: 'consoleUrl', flag: '--console-url', value: '<url>',
    description: "with ANVIL_DATABASE_URL: the console's address (https://anvil.example.com/admin/console/), which operational events link into; unset: the path /admin/console/",
    expected: 'an http:// or https:// URL without a fragment', schema: ConsoleUrl()
  }),
  journalRetentionDays: define({
    env: 'ANVIL_JOURNAL_RETENTION_DAYS', key: 'journalRetentionDays', flag: '--journal-retention-days', value: '<days>', default: '30',
    description: 'with ANVIL_DATABASE_URL: the worker deletes journal rows older than this, 0 keeps them',
    ...whole(JournalOptionsSchema.properties.retentionDays, 'days')
  }),
  journalGroupCommit: define({
    env: 'ANVIL_JOURNAL_GROUP_COMMIT', key: 'journalGroupCommit', flag: '--journal-group-commit', value: '<events,ms>',
    description: 'with ANVIL_DATABASE_URL: group commit, e.g. 16,5: up to 16 events\' handlers in one transaction, waiting at most 5 ms for more; unset: a commit per event',
    expected: 'maxEvents,maxWaitMs: an integer from 2 to 1000, then whole milliseconds up to 1000 (e.g. 16,5)',
    schema: GroupCommitSchema,
    parse: (raw) => {
      const [events, ms, ...rest] = raw.split(',').map(toInteger)
      return rest.length > 0 ? raw : { maxEvents: events, maxWaitMs: ms }
    }
  }),
  workerRole: define({
    env: 'ANVIL_WORKER_ROLE', key: 'role', flag: '--role', value: '<role>', default: 'all',
    description: 'inbound: only the queued webhooks (the handler, forwarding); outbound: only the outbox (dispatch, delivery, retention), which needs ANVIL_DATABASE_URL; all: whichever is configured',
    expected: 'all, inbound or outbound', schema: Type.Union(WORKER_ROLES.map((role) => Type.Literal(role)))
  }),
  outboundRetentionDays: define({
    env: 'ANVIL_OUTBOUND_RETENTION_DAYS', key: 'outboundRetentionDays', flag: '--outbound-retention-days', value: '<days>',
    default: String(DEFAULT_OUTBOX_RETENTION_DAYS),
    description: 'with ANVIL_DATABASE_URL: the worker deletes dispatched and failed outbox messages, with their delivery log, idle longer than this (pending ones never), 0 keeps them',
    ...whole(OutboundOptionsSchema.properties.retentionDays, 'days')
  }),
  outboxMaxAttempts: define({
    env: 'ANVIL_OUTBOX_MAX_ATTEMPTS', key: 'outboxMaxAttempts', flag: '--outbox-max-attempts', value: '<n>',
    default: String(DEFAULT_DISPATCH_RETRY.attempts),
    description: 'with ANVIL_DATABASE_URL: failed dispatches (fan-out to the delivery queue) after which a message is failed; a Redis outage uses none',
    ...whole(DispatchOptionsSchema.properties.attempts)
  }),
  outboxRetryBaseMs: define({
    env: 'ANVIL_OUTBOX_RETRY_BASE_MS', key: 'outboxRetryBaseMs', flag: '--outbox-retry-base-ms', value: '<ms>',
    default: String(DEFAULT_DISPATCH_RETRY.baseMs),
    description: 'with ANVIL_DATABASE_URL: the wait after the first failed dispatch, doubled after each next one (at most 15 minutes)',
    ...whole(DispatchOptionsSchema.properties.retryBaseMs, 'milliseconds')
  }),
  outboundRetrySchedule: define({
    env: 'ANVIL_OUTBOUND_RETRY_SCHEDULE', key: 'outboundRetrySchedule', flag: '--outbound-retry-schedule', value: '<list>',
    default: STANDARD_WEBHOOKS_SCHEDULE_MS.join(','), defaultShown: 'Standard Webhooks\' (5 s, 5 m, 30 m, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h)',
    description: `outgoing webhooks: the delays in ms between delivery attempts, e.g. 1000,5000, or ${NO_RETRIES}; the same on serve and worker`,
    expected: `comma-separated whole milliseconds from 0 to ${MAX_RETRY_STEP_MS} (e.g. 1000,5000,30000), or "${NO_RETRIES}"`,
    schema: RetrySchedule(), parse: toSchedule
  }),
  limit: define({
    key: 'limit', flag: '--limit', value: '<n>', description: 'with --all: at most this many',
    ...whole(Whole(1))
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

export type SettingKey = keyof typeof SETTINGS

/** Every environment variable the CLI reads (the container test checks deployments set no other). */
export const CONFIG_ENV_VARS: readonly string[] = [
  ...Object.values(SETTINGS).flatMap((setting) => setting.env === undefined ? [] : [setting.env]), 'WEBHOOK_SECRET', 'ANVIL_SEND_SECRET',
  ...TRACING_ENV_VARS
]
