import t from 'tap'
import { Command } from 'commander'
import {
  addDeadLetterRetentionOptions, addIngressOptions, addObservabilityOptions, addRetentionOptions, addSharedOptions,
  addStallOptions, addWorkerHttpOptions, addWorkerOptions
} from '../cli/config/options.js'
import { isAnvilError } from '../src/shared/errors.js'
import { loadJournalConfig, loadMigrateConfig, loadReplayConfig } from '../cli/config/load-database-config.js'
import {
  DEV_SECRET, journalOptionsOf, loadDevConfig, loadServeConfig, loadWorkerConfig, portalPage, type Env, type Flags
} from '../cli/config/load-config.js'
import { resolveIngressOptions } from '../src/inbound/ingress-options.js'
import { DEFAULT_CONCURRENCY, DEFAULT_RETENTION, DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../src/shared/constants.js'
import { DEFAULT_QUEUE_SETTINGS, jobOptions } from '../src/queue/queue-settings.js'
import { join } from 'node:path'
import { SETTINGS, readFields, readGroup } from '../cli/config/settings.js'
import { DEV_DEFAULTS, NESTED, SETTING_GROUPS } from '../cli/config/options.js'
import { ROOT } from './helpers/root.js'

const SECRET = 'whsec_config_test'

/** The one-line message a bad value produces, asserting it is an INVALID_CONFIG Anvil error. */
function problem (load: () => unknown): string {
  try {
    load()
  } catch (err) {
    if (isAnvilError(err) && err.code === 'ANVIL_ERR_INVALID_CONFIG') return err.message
    throw err
  }
  throw new Error('expected an invalid configuration')
}

t.test('serve defaults: 0.0.0.0:3000 at info; everything else left to the core defaults', async (t) => {
  t.same(loadServeConfig({ WEBHOOK_SECRET: SECRET }), {
    redisUrl: undefined,
    queueName: undefined,
    prefix: undefined,
    logLevel: 'info',
    host: '0.0.0.0',
    port: 3000,
    secret: SECRET,
    path: undefined,
    bodyLimit: undefined,
    requestTimeoutMs: 30000,
    maxInFlightBytes: undefined,
    dedupeWindowMs: undefined,
    retrySchedule: undefined,
    idempotency: undefined,
    retention: undefined,
    metricsPath: '/metrics',
    metricsPort: undefined,
    logPayloads: false,
    tracing: 'off'
  })
})

const ENCRYPTION_KEY = 'qUaMfNOl7yCb0YbLkXo3bWnVY0zFdhPXN5n2aI1pW3A='

t.test('every environment variable is read and typed', async (t) => {
  const env: Env = {
    WEBHOOK_SECRET: SECRET,
    REDIS_URL: 'rediss://user:pw@redis.internal:6380/2',
    PORT: '8080',
    HOST: '::',
    LOG_LEVEL: 'debug',
    ANVIL_PATH: '/hooks/stripe',
    ANVIL_QUEUE: 'stripe',
    ANVIL_PREFIX: '{stripe}',
    ANVIL_BODY_LIMIT: '65536',
    ANVIL_REQUEST_TIMEOUT_MS: '12000',
    ANVIL_TRUST_PROXY: '10.0.0.0/8, 192.168.0.1',
    ANVIL_MAX_IN_FLIGHT_BYTES: '8388608',
    ANVIL_DEDUPE_WINDOW_MS: '3600000',
    ANVIL_RETRY_SCHEDULE: '1000, 5000,30000',
    ANVIL_IDEMPOTENCY: 'header:X-Event-Id',
    WORKER_CONCURRENCY: '4',
    ANVIL_SHUTDOWN_TIMEOUT_MS: '2500',
    ANVIL_LOCK_DURATION_MS: '5000',
    ANVIL_STALLED_INTERVAL_MS: '1000',
    ANVIL_METRICS_PATH: '/internal/metrics',
    ANVIL_METRICS_PORT: '9464',
    ANVIL_LOG_PAYLOADS: 'true',
    ANVIL_TRACING: 'otlp',
    ANVIL_RETENTION_COMPLETED_AGE_SECONDS: '600',
    ANVIL_RETENTION_COMPLETED_COUNT: '0',
    ANVIL_RETENTION_FAILED_AGE_SECONDS: '86400',
    ANVIL_RETENTION_FAILED_COUNT: '500',
    ANVIL_RETENTION_DEAD_AGE_SECONDS: '0',
    ANVIL_ADMIN_TOKEN: 'admin-token-0123456789',
    ANVIL_ADMIN_PORT: '9465',
    ANVIL_DATABASE_URL: 'postgres://anvil@db.internal/anvil',
    ANVIL_DB_SCHEMA: 'hooks',
    ANVIL_JOURNAL_RETENTION_DAYS: '30',
    ANVIL_OUTBOUND_RETENTION_DAYS: '14',
    ANVIL_PORTAL_PUBLIC_URL: 'https://hooks.example.com',
    ANVIL_PORTAL_FRAME_ANCESTORS: 'https://app.example.com,https://*.example.org',
    ANVIL_ENCRYPTION_KEY: ENCRYPTION_KEY
  }
  const serve = loadServeConfig(env)
  t.same(serve, {
    redisUrl: 'rediss://user:pw@redis.internal:6380/2',
    queueName: 'stripe',
    prefix: '{stripe}',
    logLevel: 'debug',
    host: '::',
    port: 8080,
    secret: SECRET,
    path: '/hooks/stripe',
    bodyLimit: 65536,
    requestTimeoutMs: 12000,
    trustProxy: '10.0.0.0/8, 192.168.0.1',
    maxInFlightBytes: 8388608,
    dedupeWindowMs: 3600000,
    retrySchedule: [1000, 5000, 30000],
    idempotency: { header: 'X-Event-Id' },
    retention: { completedAgeSeconds: 600, completedCount: 0, failedAgeSeconds: 86400, failedCount: 500, deadAgeSeconds: 0 },
    metricsPath: '/internal/metrics',
    metricsPort: 9464,
    logPayloads: true,
    tracing: 'otlp',
    admin: { token: 'admin-token-0123456789', port: 9465 },
    databaseUrl: 'postgres://anvil@db.internal/anvil',
    dbSchema: 'hooks',
    encryptionKey: ENCRYPTION_KEY,
    portal: { publicUrl: 'https://hooks.example.com', frameAncestors: ['https://app.example.com', 'https://*.example.org'] }
  })
  t.same(loadWorkerConfig(env), {
    redisUrl: 'rediss://user:pw@redis.internal:6380/2', queueName: 'stripe', prefix: '{stripe}', logLevel: 'debug',
    concurrency: 4, shutdownTimeoutMs: 2500, lockDurationMs: 5000, stalledIntervalMs: 1000,
    metricsPath: '/internal/metrics', metricsPort: 9464, logPayloads: true, tracing: 'otlp',
    host: '::', port: 8080, role: 'all', retention: { failedAgeSeconds: 86400, deadAgeSeconds: 0 },
    databaseUrl: 'postgres://anvil@db.internal/anvil', dbSchema: 'hooks', outboundRetentionDays: 14, encryptionKey: ENCRYPTION_KEY,
    journal: { databaseUrl: 'postgres://anvil@db.internal/anvil', dbSchema: 'hooks', retentionDays: 30 },
    // A tenant's own operational events link into the portal that anvil serve offers under ANVIL_PORTAL_PUBLIC_URL.
    portalPublicUrl: 'https://hooks.example.com'
  })
  t.equal(portalPage(loadWorkerConfig(env).portalPublicUrl), 'https://hooks.example.com/admin/portal/', "the outgoing side's portalUrl")
  // What the CLI hands the ingress plugin is accepted by the core's own validation.
  // The request timeout is the server's (Fastify's), the in-flight cap the plugin's HTTP side, the admin API its own
  // plugin's: not core options.
  const {
    host, port, logLevel, redisUrl, metricsPath, metricsPort, logPayloads, tracing, requestTimeoutMs, trustProxy, maxInFlightBytes, admin, databaseUrl, dbSchema, portal,
    outboundRetrySchedule, journalQueue, encryptionKey,
    ...ingress
  } = serve
  t.doesNotThrow(() => resolveIngressOptions({ ...ingress, redis: redisUrl }))
})

t.test('a group read whole is its settings, each by its key, its fallback when unset and its mapping when set: nothing else states them', async (t) => {
  const empty = readGroup([...SETTING_GROUPS.shared, ...SETTING_GROUPS.observability, ...SETTING_GROUPS.stall, ...SETTING_GROUPS.worker], {}, {})
  t.same(empty, {
    redisUrl: undefined, queueName: undefined, prefix: undefined, logLevel: 'info',
    metricsPath: '/metrics', metricsPort: undefined, tracing: 'off', logPayloads: false,
    lockDurationMs: undefined, stalledIntervalMs: undefined, concurrency: DEFAULT_CONCURRENCY, shutdownTimeoutMs: DEFAULT_SHUTDOWN_TIMEOUT_MS
  })
  const set = readGroup(SETTING_GROUPS.observability, { ANVIL_METRICS_PATH: 'off', ANVIL_LOG_PAYLOADS: 'true', ANVIL_TRACING: 'otlp' }, {})
  t.same(set, { metricsPath: false, metricsPort: undefined, tracing: 'otlp', logPayloads: true }, 'mapped by the row\'s `to`')
  t.match(loadWorkerConfig({ WORKER_CONCURRENCY: '3', ANVIL_LOCK_DURATION_MS: '900' }), { concurrency: 3, lockDurationMs: 900, logLevel: 'info', metricsPath: '/metrics' }, 'as the loaders give it')
  t.equal(SETTINGS.concurrency.default, String(DEFAULT_CONCURRENCY), '--help shows the fallback')
})

t.test('rows an option nests are read under its names, only those set; a command\'s own default is read as if typed', async (t) => {
  t.equal(readFields(NESTED.portal, {}, {}), undefined, 'none set: no portal option')
  t.same(readFields(NESTED.portal, { ANVIL_PORTAL_PUBLIC_URL: 'https://hooks.example' }, {}), { publicUrl: 'https://hooks.example' })
  const token = 'admin-token-0123456789'
  t.same(loadJournalConfig({ ANVIL_ADMIN_URL: 'http://hooks.example:3000/', ANVIL_ADMIN_TOKEN: token }).admin, { url: 'http://hooks.example:3000/admin', token },
    "a bare server URL is mapped by its row to the admin API's base")
  t.same(loadWorkerConfig({ ANVIL_DATABASE_URL: 'postgres://db/anvil', ANVIL_JOURNAL_GROUP_COMMIT: '8,2' }).journal,
    { databaseUrl: 'postgres://db/anvil', groupCommit: { maxEvents: 8, maxWaitMs: 2 } })
  const tagged = loadWorkerConfig({ ANVIL_DATABASE_URL: 'postgres://db/anvil', ANVIL_JOURNAL_SUBJECT_PATH: 'data.object.customer' }).journal
  t.equal(tagged === undefined ? undefined : journalOptionsOf(tagged).subjectPath, 'data.object.customer',
    "ANVIL_JOURNAL_SUBJECT_PATH is the journal's subjectPath")
  t.match(problem(() => loadWorkerConfig({ ANVIL_DATABASE_URL: 'postgres://db/anvil', ANVIL_JOURNAL_SUBJECT_PATH: 'data..customer' })),
    /^Invalid configuration: ANVIL_JOURNAL_SUBJECT_PATH must be a dotted path such as data\.object\.customer \(got /, 'checked as the worker option is')
  t.equal(readGroup(['host'], {}, {}).host, '0.0.0.0', "the row's fallback")
  t.equal(readGroup(['host'], {}, {}, DEV_DEFAULTS).host, '127.0.0.1', "anvil dev's, as its --help shows it")
  t.equal(readGroup(['host'], { HOST: '::' }, {}, DEV_DEFAULTS).host, '::', 'a value set wins')
})

t.test('ANVIL_TRUST_PROXY: true, false, a hop count or networks; anything else one line', async (t) => {
  const trust = (value: string): unknown => loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_TRUST_PROXY: value }).trustProxy
  t.equal(trust('true'), true)
  t.equal(trust('false'), false)
  t.equal(trust('1'), 1)
  t.equal(trust('10.0.0.0/8,::1'), '10.0.0.0/8,::1')
  t.equal(loadServeConfig({ WEBHOOK_SECRET: SECRET }).trustProxy, undefined, 'unset: Fastify\'s default, no proxy trusted')
  for (const bad of ['0', 'yes', '10.0.0.0/33']) {
    t.match(problem(() => trust(bad)), /^Invalid configuration: ANVIL_TRUST_PROXY must be true, false, a number of hops, or (comma-separated networks of your proxies such as 10\.0\.0\.0\/8|comma-separated networks \(.*\)) \(got /)
  }
})

t.test('idempotency strategies', async (t) => {
  const strategy = (value: string): unknown => loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_IDEMPOTENCY: value }).idempotency
  t.equal(strategy('signature'), 'signature')
  t.equal(strategy('payload'), 'payload')
  t.same(strategy('header:x-github-delivery'), { header: 'x-github-delivery' })
  t.same(strategy('body:data.object.id'), { bodyField: 'data.object.id' })
  for (const bad of ['sha', 'header:', 'header:two words', 'body:', 'body:a..b', 'Signature']) {
    t.match(problem(() => strategy(bad)), `ANVIL_IDEMPOTENCY must be signature, payload, header:<name> or body:<field> (got ${JSON.stringify(bad)})`)
  }
})

t.test('the outbox dispatch and the outgoing delivery schedules: read by worker and dev (serve: the schedule), one line when wrong', async (t) => {
  const db = { ANVIL_DATABASE_URL: 'postgres://anvil@db.internal/anvil' }
  t.match(loadWorkerConfig({ ...db, ANVIL_OUTBOX_MAX_ATTEMPTS: '2', ANVIL_OUTBOX_RETRY_BASE_MS: '50', ANVIL_OUTBOUND_RETRY_SCHEDULE: '10,20' }),
    { outboxMaxAttempts: 2, outboxRetryBaseMs: 50, outboundRetrySchedule: [10, 20] })
  t.match(loadDevConfig({ ...db, ANVIL_OUTBOUND_RETRY_SCHEDULE: 'none' }), { outboundRetrySchedule: [] })
  t.match(loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_OUTBOUND_RETRY_SCHEDULE: '5' }), { outboundRetrySchedule: [5] })
  t.equal(loadWorkerConfig(db).outboxMaxAttempts, undefined, 'unset: the core\'s default')
  t.equal(problem(() => loadWorkerConfig({ ...db, ANVIL_OUTBOX_MAX_ATTEMPTS: '0' })),
    'Invalid configuration: ANVIL_OUTBOX_MAX_ATTEMPTS must be an integer from 1 to 1000 (got "0")')
  t.equal(problem(() => loadWorkerConfig({ ANVIL_OUTBOX_RETRY_BASE_MS: 'soon' })),
    'Invalid configuration: ANVIL_OUTBOX_RETRY_BASE_MS must be a whole number of milliseconds, at least 1 (got "soon")', 'checked without a database too')
  t.equal(problem(() => loadWorkerConfig({ ...db }, { outboundRetrySchedule: '1s' })),
    'Invalid configuration: --outbound-retry-schedule must be comma-separated whole milliseconds from 0 to 86400000 (e.g. 1000,5000,30000), or "none" (got "1s")')
})

t.test('ANVIL_OUTBOUND_RETENTION_DAYS: whole days, 0 keeps everything; checked even without a database', async (t) => {
  const db = { ANVIL_DATABASE_URL: 'postgres://anvil@db.internal/anvil' }
  t.equal(loadWorkerConfig({ ...db, ANVIL_OUTBOUND_RETENTION_DAYS: '0' }).outboundRetentionDays, 0)
  t.equal(loadWorkerConfig(db).outboundRetentionDays, undefined, 'unset: the core\'s default')
  t.equal(loadWorkerConfig({ ...db }, { outboundRetentionDays: '7' }).outboundRetentionDays, 7)
  t.equal(loadDevConfig({ ...db, ANVIL_OUTBOUND_RETENTION_DAYS: '3' }).outboundRetentionDays, 3)
  for (const bad of ['-1', '1.5', 'thirty', '36501']) {
    t.equal(problem(() => loadWorkerConfig({ ...db, ANVIL_OUTBOUND_RETENTION_DAYS: bad })),
      `Invalid configuration: ANVIL_OUTBOUND_RETENTION_DAYS must be a whole number of days, at least 0 (got ${JSON.stringify(bad)})`)
  }
  t.match(problem(() => loadWorkerConfig({ ANVIL_OUTBOUND_RETENTION_DAYS: 'x' })), /^Invalid configuration: ANVIL_OUTBOUND_RETENTION_DAYS must be/)
  t.match(problem(() => loadWorkerConfig(db, { outboundRetentionDays: '-2' })), /^Invalid configuration: --outbound-retention-days must be/)
})

t.test('ANVIL_WORKER_ROLE: all by default; outbound needs a database; anything else is one line', async (t) => {
  const db = { ANVIL_DATABASE_URL: 'postgres://anvil@db.internal/anvil' }
  t.equal(loadWorkerConfig({}).role, 'all')
  t.equal(loadWorkerConfig({ ANVIL_WORKER_ROLE: 'inbound' }).role, 'inbound')
  t.equal(loadWorkerConfig(db, { role: 'outbound' }).role, 'outbound')
  t.equal(problem(() => loadWorkerConfig(db, { role: 'both' })), 'Invalid configuration: --role must be all, inbound or outbound (got "both")')
  t.equal(problem(() => loadWorkerConfig({ ANVIL_WORKER_ROLE: 'outbound' })),
    'Invalid configuration: ANVIL_WORKER_ROLE outbound needs ANVIL_DATABASE_URL (or --database-url): the outbox is in PostgreSQL')
})

t.test('ANVIL_RETRY_SCHEDULE: "none" means no retries; empty means the default', async (t) => {
  const schedule = (value: string): unknown => loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_RETRY_SCHEDULE: value }).retrySchedule
  t.same(schedule('none'), [])
  t.same(schedule('0'), [0])
  t.equal(schedule(''), undefined)
})

t.test('flags override the environment', async (t) => {
  const env: Env = {
    WEBHOOK_SECRET: SECRET, REDIS_URL: 'redis://env:6379', PORT: '1111', HOST: 'env-host', LOG_LEVEL: 'error',
    ANVIL_QUEUE: 'env-queue', ANVIL_RETRY_SCHEDULE: '1', ANVIL_IDEMPOTENCY: 'payload', WORKER_CONCURRENCY: '1'
  }
  const flags: Flags = {
    redisUrl: 'redis://flag:6379', port: '2222', host: 'flag-host', logLevel: 'warn', queue: 'flag-queue',
    retrySchedule: '2,3', idempotency: 'body:id', concurrency: '7', shutdownTimeoutMs: '0'
  }
  const dev = loadDevConfig(env, flags)
  t.match(dev, {
    redisUrl: 'redis://flag:6379', port: 2222, host: 'flag-host', logLevel: 'warn', queueName: 'flag-queue',
    retrySchedule: [2, 3], idempotency: { bodyField: 'id' }, concurrency: 7, shutdownTimeoutMs: 0
  })
})

t.test('dev: 127.0.0.1:3000 and the dev secret when WEBHOOK_SECRET is unset or empty', async (t) => {
  t.match(loadDevConfig({}), {
    host: '127.0.0.1', port: 3000, secret: DEV_SECRET, devSecret: true,
    concurrency: DEFAULT_CONCURRENCY, shutdownTimeoutMs: DEFAULT_SHUTDOWN_TIMEOUT_MS
  })
  t.match(loadDevConfig({ WEBHOOK_SECRET: '' }), { secret: DEV_SECRET, devSecret: true })
  t.match(loadDevConfig({ WEBHOOK_SECRET: SECRET }), { secret: SECRET, devSecret: false })
})

t.test('serve requires WEBHOOK_SECRET (an empty one counts as missing)', async (t) => {
  const message = 'Invalid configuration: WEBHOOK_SECRET is required: set it to the secret your webhook sender signs with'
  t.equal(problem(() => loadServeConfig({})), message)
  t.equal(problem(() => loadServeConfig({ WEBHOOK_SECRET: '' })), message)
  t.equal(problem(() => loadServeConfig({}, { secret: SECRET })), message, 'there is no --secret flag')
})

t.test('bad values: one message naming the variable or flag, what it must be, and what it got', async (t) => {
  const cases: Array<[Env, Flags, string]> = [
    [{ PORT: 'abc' }, {}, 'PORT must be an integer from 0 to 65535 (got "abc")'],
    [{ PORT: '3000.5' }, {}, 'PORT must be an integer from 0 to 65535 (got "3000.5")'],
    [{ PORT: '-1' }, {}, 'PORT must be an integer from 0 to 65535 (got "-1")'],
    [{}, { port: '65536' }, '--port must be an integer from 0 to 65535 (got "65536")'],
    [{ HOST: 'two words' }, {}, 'HOST must be a host name or IP address (got "two words")'],
    [{ LOG_LEVEL: 'loud' }, {}, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
    [{ ANVIL_TRACING: 'OTLP' }, {}, 'ANVIL_TRACING must be off or otlp (got "OTLP")'],
    [{ ANVIL_TRACING: 'otlp' }, { tracing: 'true' }, '--tracing must be off or otlp (got "true")'],
    [{ ANVIL_PATH: 'webhooks' }, {}, 'ANVIL_PATH must be a URL path starting with "/" (got "webhooks")'],
    [{ ANVIL_QUEUE: 'a:b' }, {}, 'ANVIL_QUEUE must be a queue name without ":" (got "a:b")'],
    [{}, { prefix: '' }, '--prefix must be a non-empty key prefix (got "")'],
    [{ ANVIL_BODY_LIMIT: '0' }, {}, 'ANVIL_BODY_LIMIT must be a whole number of bytes, at least 1 (got "0")'],
    [{ ANVIL_BODY_LIMIT: '1mb' }, {}, 'ANVIL_BODY_LIMIT must be a whole number of bytes, at least 1 (got "1mb")'],
    [{ ANVIL_DEDUPE_WINDOW_MS: '1e3' }, {}, 'ANVIL_DEDUPE_WINDOW_MS must be a whole number of milliseconds, at least 1 (got "1e3")'],
    [{ ANVIL_RETRY_SCHEDULE: '1000,,5000' }, {}, 'ANVIL_RETRY_SCHEDULE must be comma-separated whole milliseconds from 0 to 86400000 (e.g. 1000,5000,30000), or "none" (got "1000,,5000")'],
    [{ ANVIL_RETRY_SCHEDULE: '86400001' }, {}, 'ANVIL_RETRY_SCHEDULE must be comma-separated whole milliseconds from 0 to 86400000 (e.g. 1000,5000,30000), or "none" (got "86400001")'],
    [{ REDIS_URL: 'http://cache:6379' }, {}, 'REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "http://cache:6379")'],
    [{ REDIS_URL: 'http://u:hunter2@cache:6379' }, {}, 'REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "http://u:***@cache:6379/")'],
    [{ REDIS_URL: 'not a url' }, {}, 'REDIS_URL must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "<unparseable>")'],
    [{}, { redisUrl: 'memcached://cache' }, '--redis-url must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL (got "memcached://cache")']
  ]
  for (const [env, flags, expected] of cases) {
    t.equal(problem(() => loadServeConfig({ WEBHOOK_SECRET: SECRET, ...env }, flags)), `Invalid configuration: ${expected}`)
  }
  t.equal(problem(() => loadWorkerConfig({ WORKER_CONCURRENCY: 'lots' })),
    'Invalid configuration: WORKER_CONCURRENCY must be an integer from 1 to 10000 (got "lots")')
  t.equal(problem(() => loadWorkerConfig({ ANVIL_SHUTDOWN_TIMEOUT_MS: '-5' })),
    'Invalid configuration: ANVIL_SHUTDOWN_TIMEOUT_MS must be a whole number of milliseconds, at least 0 (got "-5")')
  t.equal(problem(() => loadWorkerConfig({ ANVIL_LOCK_DURATION_MS: '499' })),
    'Invalid configuration: ANVIL_LOCK_DURATION_MS must be a whole number of milliseconds, at least 500 (got "499")')
  t.equal(problem(() => loadWorkerConfig({}, { lockDurationMs: '1.5s' })),
    'Invalid configuration: --lock-duration-ms must be a whole number of milliseconds, at least 500 (got "1.5s")')
  t.equal(problem(() => loadWorkerConfig({ ANVIL_STALLED_INTERVAL_MS: '99' })),
    'Invalid configuration: ANVIL_STALLED_INTERVAL_MS must be a whole number of milliseconds, at least 100 (got "99")')
  t.equal(problem(() => loadWorkerConfig({}, { stalledIntervalMs: '0' })),
    'Invalid configuration: --stalled-interval-ms must be a whole number of milliseconds, at least 100 (got "0")')
  t.match(loadWorkerConfig({ ANVIL_LOCK_DURATION_MS: '', ANVIL_STALLED_INTERVAL_MS: '' }), { lockDurationMs: undefined, stalledIntervalMs: undefined },
    'unset (or empty): BullMQ\'s defaults apply')
  t.equal(problem(() => loadReplayConfig({}, { limit: '0' })), 'Invalid configuration: --limit must be an integer of at least 1 (got "0")')
  t.equal(loadReplayConfig({}, { limit: '25' }).limit, 25)
})

t.test('a long bad value is cut short; a password in a bad REDIS_URL is never repeated', async (t) => {
  const long = 'x'.repeat(500)
  const message = problem(() => loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_PATH: long }))
  t.ok(message.length < 200, message)
  t.notMatch(problem(() => loadServeConfig({ WEBHOOK_SECRET: SECRET, REDIS_URL: 'http://u:hunter2@h:1' })), 'hunter2')
  t.notMatch(problem(() => loadServeConfig({ WEBHOOK_SECRET: SECRET, REDIS_URL: 'redis//u:hunter2@h' })), 'hunter2')
  t.notMatch(problem(() => loadServeConfig({ WEBHOOK_SECRET: SECRET, PORT: 'x' })), SECRET)
})

t.test('settings a command does not use are not read', async (t) => {
  t.doesNotThrow(() => loadWorkerConfig({ ANVIL_BODY_LIMIT: 'abc', ANVIL_RETRY_SCHEDULE: 'soon' }))
  t.doesNotThrow(() => loadReplayConfig({ WORKER_CONCURRENCY: '0', PORT: 'abc', ANVIL_METRICS_PORT: 'abc' }))
  // The worker listens too (health and metrics), so it does read HOST and PORT.
  t.throws(() => loadWorkerConfig({ PORT: 'abc' }), { message: /PORT must be an integer/ })
})

t.test('every CLI flag reaches its setting (commander names the keys config reads)', async (t) => {
  const command = addObservabilityOptions(addRetentionOptions(addWorkerOptions(addIngressOptions(addSharedOptions(new Command('dev')))))).exitOverride()
  command.parse([
    '--redis-url', 'redis://flag:1', '--queue', 'q', '--prefix', 'p', '--log-level', 'trace',
    '--host', 'h', '--port', '1', '--path', '/p', '--body-limit', '2', '--request-timeout-ms', '14', '--trust-proxy', '2', '--max-in-flight-bytes', '15', '--dedupe-window-ms', '3',
    '--retry-schedule', '4,5', '--idempotency', 'payload', '--concurrency', '6', '--shutdown-timeout-ms', '7',
    '--metrics-path', 'off', '--metrics-port', '8', '--tracing', 'otlp', '--log-payloads', 'true',
    '--retention-completed-age-seconds', '9', '--retention-completed-count', '10', '--retention-failed-age-seconds', '11',
    '--retention-failed-count', '12', '--retention-dead-age-seconds', '13'
  ], { from: 'user' })
  t.same(loadDevConfig({ WEBHOOK_SECRET: SECRET }, command.opts()), {
    redisUrl: 'redis://flag:1',
    queueName: 'q',
    prefix: 'p',
    logLevel: 'trace',
    host: 'h',
    port: 1,
    secret: SECRET,
    path: '/p',
    bodyLimit: 2,
    requestTimeoutMs: 14,
    trustProxy: 2,
    maxInFlightBytes: 15,
    dedupeWindowMs: 3,
    retrySchedule: [4, 5],
    idempotency: 'payload',
    concurrency: 6,
    shutdownTimeoutMs: 7,
    metricsPath: false,
    metricsPort: 8,
    logPayloads: true,
    tracing: 'otlp',
    retention: { completedAgeSeconds: 9, completedCount: 10, failedAgeSeconds: 11, failedCount: 12, deadAgeSeconds: 13 },
    devSecret: false
  })
  const worker = addObservabilityOptions(addDeadLetterRetentionOptions(addStallOptions(addWorkerHttpOptions(addWorkerOptions(addSharedOptions(new Command('worker'))))))).exitOverride()
  worker.parse(['--retention-failed-age-seconds', '60', '--retention-dead-age-seconds', '120', '--lock-duration-ms', '2000', '--stalled-interval-ms', '500'], { from: 'user' })
  t.match(loadWorkerConfig({}, worker.opts()), { retention: { failedAgeSeconds: 60, deadAgeSeconds: 120 }, lockDurationMs: 2000, stalledIntervalMs: 500 })
})


t.test('retention: only what is set; the core fills in the rest and accepts the result', async (t) => {
  const serve = loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_RETENTION_FAILED_AGE_SECONDS: '60', ANVIL_RETENTION_DEAD_AGE_SECONDS: '120' })
  t.same(serve.retention, { failedAgeSeconds: 60, deadAgeSeconds: 120 })
  const settings = resolveIngressOptions({ secret: SECRET, retention: serve.retention }).settings
  t.same(settings.retention, { ...DEFAULT_RETENTION, failedAgeSeconds: 60, deadAgeSeconds: 120 })
  t.match(jobOptions(settings), { removeOnFail: { age: 60, count: DEFAULT_RETENTION.failedCount } })
  t.same(jobOptions(DEFAULT_QUEUE_SETTINGS), jobOptions(resolveIngressOptions({ secret: SECRET }).settings), 'unset: the defaults')
  t.equal(loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_RETENTION_COMPLETED_COUNT: '' }).retention, undefined, 'empty is unset')
  // The worker needs dead letters' age only; completed and failed counts are the ingress's.
  t.doesNotThrow(() => loadWorkerConfig({ ANVIL_RETENTION_COMPLETED_COUNT: 'many', ANVIL_RETENTION_FAILED_COUNT: '-1' }))
  t.same(loadWorkerConfig({ ANVIL_RETENTION_DEAD_AGE_SECONDS: '0' }).retention, { deadAgeSeconds: 0 }, '0 keeps dead letters')
})

t.test('retention: bad values, and dead letters that would not outlive failed jobs, are one line each', async (t) => {
  const serve = (env: Env, flags: Flags = {}): string => problem(() => loadServeConfig({ WEBHOOK_SECRET: SECRET, ...env }, flags))
  t.equal(serve({ ANVIL_RETENTION_COMPLETED_AGE_SECONDS: '0' }),
    'Invalid configuration: ANVIL_RETENTION_COMPLETED_AGE_SECONDS must be a whole number of seconds, at least 1 (got "0")')
  t.equal(serve({ ANVIL_RETENTION_COMPLETED_COUNT: '1k' }),
    'Invalid configuration: ANVIL_RETENTION_COMPLETED_COUNT must be a whole number of jobs, at least 0 (got "1k")')
  t.equal(serve({}, { retentionFailedAgeSeconds: '1.5' }),
    'Invalid configuration: --retention-failed-age-seconds must be a whole number of seconds, at least 1 (got "1.5")')
  t.equal(serve({ ANVIL_RETENTION_FAILED_COUNT: '-1' }),
    'Invalid configuration: ANVIL_RETENTION_FAILED_COUNT must be a whole number of jobs, at least 0 (got "-1")')
  t.equal(serve({ ANVIL_RETENTION_DEAD_AGE_SECONDS: '2w' }),
    'Invalid configuration: ANVIL_RETENTION_DEAD_AGE_SECONDS must be a whole number of seconds, at least 0 (0 keeps dead letters) (got "2w")')
  t.equal(serve({ ANVIL_RETENTION_FAILED_AGE_SECONDS: '60', ANVIL_RETENTION_DEAD_AGE_SECONDS: '60' }),
    'Invalid configuration: ANVIL_RETENTION_DEAD_AGE_SECONDS must be 0 or more than ANVIL_RETENTION_FAILED_AGE_SECONDS (60 s), so dead letters outlive failed jobs (got "60")')
  t.equal(problem(() => loadWorkerConfig({}, { retentionDeadAgeSeconds: '3600' })),
    'Invalid configuration: --retention-dead-age-seconds must be 0 or more than ANVIL_RETENTION_FAILED_AGE_SECONDS (604800 s), so dead letters outlive failed jobs (got "3600")')
  t.equal(serve({ ANVIL_RETENTION_FAILED_AGE_SECONDS: '2000000' }),
    'Invalid configuration: ANVIL_RETENTION_DEAD_AGE_SECONDS must be 0 or more than ANVIL_RETENTION_FAILED_AGE_SECONDS (2000000 s), so dead letters outlive failed jobs (got its default, 1209600)')
  t.same(loadServeConfig({ WEBHOOK_SECRET: SECRET, ANVIL_RETENTION_FAILED_AGE_SECONDS: '2000000', ANVIL_RETENTION_DEAD_AGE_SECONDS: '0' }).retention,
    { failedAgeSeconds: 2000000, deadAgeSeconds: 0 }, 'with 0 dead letters stay, whatever the failed age')
})

t.test('the README\'s configuration table has a row for every variable and flag, with its default', async (t) => {
  const { readFileSync } = await import('node:fs')
  const { SETTINGS, CONFIG_ENV_VARS } = await import('../cli/config/settings.js')
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const rows = readme.split('\n').filter((line) => line.startsWith('| `'))
  for (const name of CONFIG_ENV_VARS) {
    const row = rows.find((line) => line.startsWith(`| \`${name}\` |`))
    t.ok(row !== undefined && row.split('|').length >= 5, `${name} has a row`)
  }
  for (const setting of Object.values(SETTINGS)) {
    if (setting.env === undefined || setting.flag === undefined) continue
    const row = rows.find((line) => line.startsWith(`| \`${setting.env}\` |`)) ?? ''
    t.match(row, `\`${setting.flag}\``, `${setting.env}: its flag ${setting.flag}`)
  }
})

t.test('each command has a flag for every setting its loader reads, and reads every setting it has a flag for', async (t) => {
  const { createProgram } = await import('../cli/program.js')
  const { SETTINGS } = await import('../cli/config/settings.js')
  const loaders: Record<string, (env: Env, flags: Flags) => unknown> = {
    serve: loadServeConfig, worker: loadWorkerConfig, replay: loadReplayConfig, dev: loadDevConfig,
    migrate: loadMigrateConfig
  }
  /** What a command needs set to load at all. */
  const required: Record<string, Env> = { migrate: { ANVIL_DATABASE_URL: 'postgres://127.0.0.1/anvil' } }
  const program = createProgram('0.0.0')
  for (const [name, load] of Object.entries(loaders)) {
    const command = program.commands.find((c) => c.name() === name)
    if (command === undefined) throw new Error(`no ${name} command`)
    const envRead = new Set<string>()
    const flagsRead = new Set<string>()
    const env = new Proxy<Env>({ WEBHOOK_SECRET: SECRET, ...required[name] }, { get: (target, key: string) => { envRead.add(key); return target[key] } })
    const flags = new Proxy<Flags>({}, { get: (target, key: string) => { flagsRead.add(key); return target[key] } })
    load(env, flags)
    envRead.delete('WEBHOOK_SECRET')
    // Secrets have no flag: they are read from their variable only.
    for (const setting of Object.values(SETTINGS)) if (setting.flag === undefined && setting.env !== undefined) envRead.delete(setting.env)
    const settingsOnCommand = Object.values(SETTINGS).filter((setting) => command.options.some((option) => option.long === setting.flag))
    t.same([...envRead].sort(), settingsOnCommand.flatMap((setting) => setting.env ?? []).sort(), `${name}: the variables it reads are those of its flags`)
    t.same([...flagsRead].sort(), settingsOnCommand.map((setting) => setting.key).sort(), `${name}: the flags it reads are its own`)
    for (const setting of settingsOnCommand) {
      const option = command.options.find((o) => o.long === setting.flag)
      t.equal(option?.envVar, setting.env, `${name} ${setting.flag}: its variable, from the one table`)
    }
  }
})

t.test('a default or a variable commander knows of is never taken for a flag', async (t) => {
  const { createProgram } = await import('../cli/program.js')
  const { givenFlags } = await import('../cli/config/options.js')
  const program = createProgram('0.0.0').exitOverride()
  const serve = program.commands.find((c) => c.name() === 'serve')
  if (serve === undefined) throw new Error('no serve command')
  serve.action(() => {})
  const saved = process.env.PORT
  process.env.PORT = ''
  t.teardown(() => { if (saved === undefined) delete process.env.PORT; else process.env.PORT = saved })
  await program.parseAsync(['serve', '--queue', 'q'], { from: 'user' })
  t.same(givenFlags(serve), { queue: 'q' }, 'only what was typed')
  t.equal(serve.getOptionValueSource('port'), 'env', 'commander did see the variable')
})
