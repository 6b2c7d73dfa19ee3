/** The settings of the HTTP server and its Redis: where it listens, what it takes, how it logs and traces. */
import { Type } from '@sinclair/typebox'
import { redactUrl, redisUrlProblem } from '../../src/redis/connect.js'
import { MAX_RETRY_STEP_MS, PREFIX_PATTERN, PREFIX_RULE, Whole } from '../../src/shared/schemas.js'
import { workerSettings } from '../../src/worker/worker-options.js'
import { ingressProperties } from '../../src/inbound/ingress-options.js'
import { MIN_SECRET_BYTES } from '../../src/signing/secret-problem.js'
import { netsProblem } from '../../src/send/cidr.js'
import {
  DEFAULT_BODY_LIMIT, DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_METRICS_PATH, DEFAULT_PATH, DEFAULT_PREFIX,
  DEFAULT_QUEUE_NAME, DEFAULT_REDIS_URL, DEFAULT_RETRY_SCHEDULE, MAX_BODY_LIMIT
} from '../../src/shared/constants.js'
import type { IdempotencyStrategy } from '../../src/inbound/idempotency.js'
import { define, toInteger, toSchedule, whole } from './setting.js'
import {
  DEFAULT_LOG_LEVEL, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SERVE_HOST, LOG_LEVELS, METRICS_OFF, NO_RETRIES, TRACING_MODES
} from './cli-constants.js'

/** The plugin's `idempotency` from ANVIL_IDEMPOTENCY (the pattern above has checked it). */
function toStrategy (value: string): IdempotencyStrategy {
  if (value.startsWith('header:')) return { header: value.slice('header:'.length) }
  if (value.startsWith('body:')) return { bodyField: value.slice('body:'.length) }
  return value as 'signature' | 'payload'
}

const REDIS_URL_EXPECTED = 'a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL'

export const SERVER_SETTINGS = {
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
    env: 'LOG_LEVEL', key: 'logLevel', flag: '--log-level', value: '<level>', fallback: DEFAULT_LOG_LEVEL,
    description: LOG_LEVELS.join(', '), expected: `one of ${LOG_LEVELS.join(', ')}`,
    schema: Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)))
  }),
  host: define({
    env: 'HOST', key: 'host', flag: '--host', value: '<host>', fallback: DEFAULT_SERVE_HOST,
    description: 'address to listen on',
    expected: 'a host name or IP address', schema: Type.String({ pattern: '^\\S+$' })
  }),
  port: define({
    env: 'PORT', key: 'port', flag: '--port', value: '<port>', fallback: DEFAULT_PORT,
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
    fallback: DEFAULT_REQUEST_TIMEOUT_MS, description: 'a request not complete in this long gets 408 and is closed',
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
    schema: Type.String({ pattern: "^(signature|payload|header:[A-Za-z0-9!#$%&'*+.^_`|~-]+|body:[^\\s.]+(\\.[^\\s.]+)*)$" }),
    to: toStrategy
  }),
  metricsPath: define({
    env: 'ANVIL_METRICS_PATH', key: 'metricsPath', flag: '--metrics-path', value: '<path>', fallback: DEFAULT_METRICS_PATH,
    description: `Prometheus metrics route, or ${METRICS_OFF}`, expected: `a URL path starting with "/", or "${METRICS_OFF}"`,
    schema: Type.String({ pattern: `^(${METRICS_OFF}|/\\S*)$` }),
    // false: served nowhere.
    to: (path: string): string | false => path === METRICS_OFF ? false : path
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
    env: 'ANVIL_LOG_PAYLOADS', key: 'logPayloads', flag: '--log-payloads', value: '<bool>', fallback: false,
    description: 'true: log payloads instead of redacting them', expected: 'true or false',
    schema: Type.Union([Type.Literal('true'), Type.Literal('false')]), to: (flag: string): boolean => flag === 'true'
  }),
  tracing: define({
    env: 'ANVIL_TRACING', key: 'tracing', flag: '--tracing', value: '<mode>', fallback: 'off',
    description: 'off, or otlp: OpenTelemetry spans to OTEL_EXPORTER_OTLP_ENDPOINT', expected: TRACING_MODES.join(' or '),
    schema: Type.Union(TRACING_MODES.map((mode) => Type.Literal(mode)))
  }),
  allowShortSecrets: define({
    env: 'ANVIL_ALLOW_SHORT_SECRETS', key: 'allowShortSecrets', flag: '--allow-short-secrets', value: '<bool>', default: 'false',
    description: `true: accept secrets shorter than ${MIN_SECRET_BYTES} bytes (for development; anvil dev always does)`,
    expected: 'true or false', schema: Type.Union([Type.Literal('true'), Type.Literal('false')]),
    // Undefined when unset: the core's own default (false).
    to: (flag: string): boolean => flag === 'true'
  }),
  config: define({
    env: 'ANVIL_CONFIG', key: 'config', flag: '--config', value: '<file>',
    description: 'JSON or YAML sources file, { "sources": [...] }, one per provider',
    expected: 'the path of a JSON or YAML sources file', schema: Type.String({ minLength: 1 })
  })
}
