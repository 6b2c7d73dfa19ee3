/**
 * Rules that used to be written in two places and drifted apart, now stated once: each test holds the former
 * pair to the same answer, so they cannot part again.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { ROOT } from './helpers/root.js'
import { TestRedis } from './helpers/redis.js'
import { beforeAll } from './helpers/before-all.js'

import Fastify from 'fastify'
import { UnrecoverableError } from 'bullmq'
import anvil from '../plugins/ingress.js'
import { DEFAULT_CONCURRENCY } from '../src/shared/constants.js'
import type { TSchema } from '@sinclair/typebox'
import { SETTINGS, read, type SettingKey } from '../cli/config/settings.js'
import type { Setting } from '../cli/config/setting.js'
import { loadDevConfig, loadWorkerConfig } from '../cli/config/load-config.js'
import { workerOptions } from '../cli/config/worker-options.js'
import { checkWorkerOptions, workerSettings } from '../src/worker/worker-options.js'
import { JournalOptionsSchema } from '../src/journal/journal-options.js'
import { OutboundOptionsSchema } from '../src/outbox/outbound-options.js'
import { DeliveryWorkerOptionsSchema } from '../src/delivery/delivery-options.js'
import { RetentionSchema } from '../src/shared/schemas.js'
import { compileCheck, throwInvalid } from '../src/shared/validate.js'
import { DatabaseOptionsSchema, checkSchema } from '../src/db/database.js'
import { EventLogOptionsSchema } from '../src/event-log/event-log.js'
import { constantTimeEqual, tokenMatcher } from '../src/signing/crypto.js'
import { errorReply, errors } from '../src/shared/errors.js'
import { DEFAULT_TOLERANCE_SECONDS, PROVIDER_NAMES, PUBLIC_KEY_PROVIDERS, SIGNATURE_HEADERS, createPresetScheme } from '../src/providers/presets.js'
import { generateKeyPair } from '../src/testing/generate-key-pair.js'
import { createLogger } from '../cli/logging.js'
import { DEFAULT_PAGE_SIZE, pageSize, toPage } from '../src/paging/page.js'
import { OUTBOUND_MAX_PAGE, outboundPageSize } from '../src/paging/outbound-page-size.js'
import { JOURNAL_MAX_PAGE, journalPageSize } from '../src/event-log/event-queries.js'
import { PageQuery } from '../plugins/admin/outbound-schemas.js'
import { parseDuration } from '../src/time/duration.js'
import { resolveFilter, statsWindowMs } from '../src/event-log/event-filter.js'
import { createWorker } from '../src/worker/worker.js'
import { createReplayer, ReplayOptionsSchema } from '../src/worker/replay.js'
import { createDeliveryWorker } from '../src/delivery/delivery-worker.js'
import { openEventLog } from '../src/event-log/open-event-log.js'
import { FormatRegistry } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { EndpointRowSchema } from '../src/sql/endpoints.js'
import { DeliveryRowSchema } from '../src/sql/deliveries.js'
import { OutboxRowSchema } from '../src/sql/outbox.js'
import { EndpointSchema, EndpointShape } from '../src/endpoints/endpoint-schemas.js'
import { DeliveryDetailSchema, DeliverySchema, DeliveryShape, MessageSchema, MessageShape, toDeliveryDetail } from '../src/delivery-log/delivery-schemas.js'
import { eventually } from './helpers/eventually.js'

/** Every TypeScript file of the core, the plugins and the CLI, with its text. */
// The behavioural checks below start the workers, the replayer and the event log on a Redis of this file's own.
const redis = beforeAll(t, async () => await TestRedis.start(), async (redis) => await redis.stop())

const SOURCES = ['src', 'plugins', 'cli'].flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts')).map((file) => ({ file: join(dir, file), text: readFileSync(join(ROOT, dir, file), 'utf8') })))

/** The values either side of each bound of an integer schema, and one well inside. */
function probes (schema: TSchema): number[] {
  const { minimum, maximum } = schema as unknown as { minimum: number, maximum: number }
  const values = [minimum - 1, minimum, minimum + 1, 2 * minimum + 7]
  return maximum < Number.MAX_SAFE_INTEGER ? [...values, maximum - 1, maximum, maximum + 1] : values
}

function cliAccepts (key: SettingKey, value: number | string): boolean {
  const setting = SETTINGS[key] as unknown as Setting<TSchema>
  try {
    read(setting, { [setting.env as string]: String(value) }, {})
    return true
  } catch {
    return false
  }
}

const checkJournal = compileCheck(JournalOptionsSchema)
const checkOutbound = compileCheck(OutboundOptionsSchema)
const checkRetention = compileCheck(RetentionSchema)
const checkDelivery = compileCheck(DeliveryWorkerOptionsSchema)

/** Each CLI setting, the core option it feeds, and that option's own check. */
const PAIRS: Array<[SettingKey, TSchema, (value: number) => string | undefined]> = [
  ['concurrency', SETTINGS.concurrency.schema, (concurrency) => checkWorkerOptions({ redis: 'redis://x', concurrency })],
  ['shutdownTimeoutMs', SETTINGS.shutdownTimeoutMs.schema, (shutdownTimeoutMs) => checkWorkerOptions({ redis: 'redis://x', shutdownTimeoutMs })],
  ['lockDurationMs', SETTINGS.lockDurationMs.schema, (lockDurationMs) => checkWorkerOptions({ redis: 'redis://x', lockDurationMs })],
  ['stalledIntervalMs', SETTINGS.stalledIntervalMs.schema, (stalledIntervalMs) => checkWorkerOptions({ redis: 'redis://x', stalledIntervalMs })],
  ['deadAgeSeconds', SETTINGS.deadAgeSeconds.schema, (deadAgeSeconds) => checkWorkerOptions({ redis: 'redis://x', deadAgeSeconds })],
  ['completedAgeSeconds', SETTINGS.completedAgeSeconds.schema, (completedAgeSeconds) => checkRetention({ completedAgeSeconds })],
  ['completedCount', SETTINGS.completedCount.schema, (completedCount) => checkRetention({ completedCount })],
  ['failedAgeSeconds', SETTINGS.failedAgeSeconds.schema, (failedAgeSeconds) => checkRetention({ failedAgeSeconds })],
  ['failedCount', SETTINGS.failedCount.schema, (failedCount) => checkRetention({ failedCount })],
  ['journalRetentionDays', SETTINGS.journalRetentionDays.schema, (retentionDays) => checkJournal({ database: 'postgres://x', retentionDays })],
  ['outboundRetentionDays', SETTINGS.outboundRetentionDays.schema, (retentionDays) => checkOutbound({ database: 'postgres://x', retentionDays })],
  ['outboxMaxAttempts', SETTINGS.outboxMaxAttempts.schema, (attempts) => checkOutbound({ database: 'postgres://x', dispatch: { attempts } })],
  ['outboxRetryBaseMs', SETTINGS.outboxRetryBaseMs.schema, (retryBaseMs) => checkOutbound({ database: 'postgres://x', dispatch: { retryBaseMs } })]
]

t.test('a CLI setting takes exactly what the core option it feeds takes, at every bound', async (t) => {
  for (const [key, schema, core] of PAIRS) {
    for (const value of probes(schema)) {
      t.equal(cliAccepts(key, value), core(value) === undefined, `${key} = ${value}`)
    }
  }
})

t.test('the delivery worker takes the inbound worker\'s bounds (ANVIL_LOCK_DURATION_MS and the rest feed both)', async (t) => {
  for (const key of ['concurrency', 'lockDurationMs', 'stalledIntervalMs'] as const) {
    for (const value of probes(SETTINGS[key].schema)) {
      t.equal(checkDelivery({ redis: 'redis://x', store: {}, [key]: value }) === undefined, checkWorkerOptions({ redis: 'redis://x', [key]: value }) === undefined, `${key} = ${value}`)
    }
  }
})

t.test('the CLI\'s message quotes the core option\'s bounds', async (t) => {
  t.throws(() => loadWorkerConfig({ WORKER_CONCURRENCY: '10001' }), { message: /WORKER_CONCURRENCY must be an integer from 1 to 10000/ })
  t.throws(() => loadWorkerConfig({ ANVIL_LOCK_DURATION_MS: '499' }), { message: /at least 500/ })
  t.equal(checkWorkerOptions({ redis: 'redis://x', concurrency: 10_001 }), 'concurrency: Expected integer to be less or equal to 10000')
  t.match(checkWorkerOptions({ redis: 'redis://x', lockDurationMs: 499 }), /lockDurationMs: Expected integer to be greater or equal to 500/)
})

t.test('anvil worker and anvil dev map their settings to the worker\'s options alike, and the worker takes them', async (t) => {
  const env = {
    WORKER_CONCURRENCY: '7', ANVIL_SHUTDOWN_TIMEOUT_MS: '1234', ANVIL_QUEUE: 'q', ANVIL_PREFIX: '{p}',
    ANVIL_RETENTION_DEAD_AGE_SECONDS: '999999', ANVIL_DATABASE_URL: 'postgres://db/x', ANVIL_DB_SCHEMA: 's', ANVIL_JOURNAL_RETENTION_DAYS: '3'
  }
  const expected = {
    redis: 'redis://r', queueName: 'q', prefix: '{p}', concurrency: 7, shutdownTimeoutMs: 1234, deadAgeSeconds: 999999,
    journal: { database: 'postgres://db/x', schema: 's', retentionDays: 3 }
  }
  const worker = workerOptions(loadWorkerConfig({ ...env, ANVIL_LOCK_DURATION_MS: '5000', ANVIL_STALLED_INTERVAL_MS: '700' }), 'redis://r', undefined)
  t.match(worker, { ...expected, lockDurationMs: 5000, stalledIntervalMs: 700 })
  t.equal(checkWorkerOptions(worker), undefined)
  const dev = workerOptions(loadDevConfig(env), 'redis://r', undefined)
  t.match(dev, expected)
  t.equal(checkWorkerOptions(dev), undefined)
})

t.test('one rule for a PostgreSQL schema name: the database, the journal, the event log, the outbound options and the CLI agree', async (t) => {
  const checkDatabase = compileCheck(DatabaseOptionsSchema)
  const checkEventLog = compileCheck(EventLogOptionsSchema)
  const names = ['anvil', 'tenant_2', '_x', 'x'.repeat(63), 'x'.repeat(64), 'Anvil', '2x', 'a-b', 'a b', '', 'Robert"); DROP TABLE']
  for (const schema of names) {
    let opened = true
    try { checkSchema(schema) } catch { opened = false }
    t.equal(checkDatabase({ schema }) === undefined, opened, `database options: ${schema}`)
    t.equal(checkJournal({ database: 'postgres://x', schema }) === undefined, opened, `journal: ${schema}`)
    t.equal(checkEventLog({ redis: 'redis://x', schema }) === undefined, opened, `event log: ${schema}`)
    t.equal(checkOutbound({ database: 'postgres://x', schema }) === undefined, opened, `outbound: ${schema}`)
    // An empty variable counts as unset in the CLI, so it is not a name there.
    if (schema !== '') t.equal(cliAccepts('dbSchema', schema), opened, `ANVIL_DB_SCHEMA: ${schema}`)
  }
})

t.test('one constant-time compare: only src/signing/crypto.ts calls timingSafeEqual, and its helpers hold', async (t) => {
  t.same(SOURCES.filter(({ text }) => text.includes('timingSafeEqual')).map(({ file }) => file), ['src/signing/crypto.ts'])
  t.ok(constantTimeEqual(Buffer.from('abc'), Buffer.from('abc')))
  t.notOk(constantTimeEqual(Buffer.from('abc'), Buffer.from('abd')))
  t.notOk(constantTimeEqual(Buffer.from('abc'), Buffer.from('abcd')), 'another length fails, and does not throw')
  const matches = tokenMatcher(['first-token', 'second'])
  t.ok(matches('first-token'))
  t.ok(matches('second'))
  t.notOk(matches('second2'))
  t.notOk(matches(''))
})

t.test("every preset's signature headers, as its scheme names them, are redacted from log lines", async (t) => {
  const lines: string[] = []
  const log = createLogger('info', new Writable({ write (chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done() } }))
  for (const provider of PROVIDER_NAMES) {
    const secret = PUBLIC_KEY_PROVIDERS.includes(provider)
      ? generateKeyPair(provider as 'discord' | 'sendgrid').publicKey
      : 'whsec_' + Buffer.from('rules-once-secret-0123456789').toString('base64')
    const scheme = createPresetScheme(provider, { secrets: [secret], toleranceSeconds: DEFAULT_TOLERANCE_SECONDS })
    t.ok(scheme.headers.length > 0, `${provider} names its headers`)
    for (const name of scheme.headers) {
      t.ok(SIGNATURE_HEADERS.includes(name), `${provider}: ${name} is in SIGNATURE_HEADERS`)
      log.info({ req: { headers: { [name]: `sig-${provider}-${name}` } }, headers: { [name]: `sig-${provider}-${name}` } })
      t.notOk(lines.join('').includes(`sig-${provider}-${name}`), `${provider}: ${name} is redacted`)
    }
  }
})

t.test('one error reply: an Anvil error speaks for itself, any other 5xx is ANVIL_ERR_INTERNAL, a foreign 4xx takes the caller\'s code', async (t) => {
  t.same(errorReply(new errors.INVALID_FILTER('bad'), 400, 'X'), { error: 'Invalid filter: bad', code: 'ANVIL_ERR_INVALID_FILTER' })
  t.same(errorReply(new Error('password=hunter2 in a stack'), 500, 'X'), { error: 'Internal Server Error', code: 'ANVIL_ERR_INTERNAL' })
  t.same(errorReply(new errors.INTERNAL(), 500, 'X'), { error: 'Internal Server Error', code: 'ANVIL_ERR_INTERNAL' }, 'the registry\'s INTERNAL is the same reply')
  t.same(errorReply(new Error('Unsupported Media Type'), 415, 'FST_ERR_CTP_INVALID_MEDIA_TYPE'), { error: 'Unsupported Media Type', code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' })
})

t.test('one paging rule: the outbound lists and the event lists size and cut their pages alike, each to its own bound', async (t) => {
  const defining = SOURCES.filter(({ text }) => /DEFAULT_PAGE_SIZE\s*=|rows\.slice\(0, limit\)|\?\? DEFAULT_PAGE_SIZE/.test(text)).map(({ file }) => file)
  t.same(defining, ['src/paging/page.ts'], 'only the paging helper picks a default size or cuts the extra row')
  for (const limit of [undefined, -1, 0, 1, 2, DEFAULT_PAGE_SIZE, 199, 200, 201, 499, 500, 501, 10_000]) {
    t.equal(outboundPageSize(limit), pageSize(limit, OUTBOUND_MAX_PAGE), `outbound: ${String(limit)}`)
    t.equal(journalPageSize(limit), pageSize(limit, JOURNAL_MAX_PAGE), `events: ${String(limit)}`)
    if (limit === undefined || limit <= OUTBOUND_MAX_PAGE) t.equal(outboundPageSize(limit), journalPageSize(limit), `below both bounds they agree: ${String(limit)}`)
  }
  t.equal(pageSize(undefined, 10), 10, 'the default never passes the bound')
  t.equal(PageQuery.limit.maximum, OUTBOUND_MAX_PAGE, 'the outbound routes take the outbound bound')
  t.same(toPage([1, 2, 3], 2, (n) => [n], String), { items: ['1', '2'], next: Buffer.from('[2]').toString('base64url') })
  t.same(toPage([1, 2], 2, (n) => [n], String), { items: ['1', '2'], next: null })
})

t.test('one duration grammar: a filter\'s since and the stats window take the same durations, as the same span', async (t) => {
  const now = Date.UTC(2026, 0, 31, 12)
  const inputs = ['30s', '15m', '1h', '24h', '7d', '2w', '0m', '999999999s', '999999999w', '5', 'h', '1.5h', '-1h', '1 h', '1H', '1y', '1000000000s', '']
  for (const text of inputs) {
    let since: number | undefined
    let window: number | undefined
    try { since = now - (resolveFilter({ since: text }, now).since as Date).getTime() } catch { since = undefined }
    try { window = statsWindowMs(text, now) } catch { window = undefined }
    t.equal(window, since, `${JSON.stringify(text)}: the same span, or refused by both`)
    if (window !== undefined) t.equal(window, parseDuration(text), `${text} is the parser's`)
  }
  t.equal(statsWindowMs('24h', now), 86_400_000)
  t.equal(parseDuration('1w'), 7 * 86_400_000)
})

t.test('the console takes the server\'s event shape and statuses: neither is declared in console/src', async (t) => {
  const consoleDir = join(ROOT, 'console', 'src')
  const files = readdirSync(consoleDir, { recursive: true, encoding: 'utf8' }).filter((file) => /\.tsx?$/.test(file))
    .map((file) => ({ file, text: readFileSync(join(consoleDir, file), 'utf8') }))
  t.same(files.filter(({ text }) => /interface EventItem\b/.test(text)).map(({ file }) => file), [], 'no EventItem of its own')
  t.same(files.filter(({ text }) => /'received',\s*'processing'|'done',\s*'received'/.test(text)).map(({ file }) => file), [], 'no list of statuses of its own')
  t.ok(files.some(({ text }) => text.includes("from '../../../src/event-log/event-item'")), 'it imports the server\'s')
})

t.test('one default concurrency: the inbound and the delivery worker, given none, run src/shared/constants.ts\'s', async (t) => {
  t.same(SOURCES.filter(({ text }) => /CONCURRENCY\s*=\s*\d/.test(text)).map(({ file }) => file), ['src/shared/constants.ts'])
  const inbound = createWorker(async () => {}, { redis: redis.url, sweepIntervalMs: 0 })
  const delivery = createDeliveryWorker({ redis: redis.url, store: { loadSecrets: async () => [] } })
  t.teardown(async () => await Promise.all([inbound.close(), delivery.close()]))
  t.equal(inbound.worker.opts.concurrency, DEFAULT_CONCURRENCY, 'the inbound worker')
  t.equal(delivery.worker.opts.concurrency, DEFAULT_CONCURRENCY, 'the delivery worker')
})

t.test('one opening for the Redis-backed components: each refuses a bad option and a cluster prefix with no hash tag alike', async (t) => {
  const opens: Record<string, (options: { redis: string, prefix?: string, queueName?: string }) => unknown> = {
    worker: (options) => createWorker(async () => {}, options),
    replayer: (options) => createReplayer(options),
    'delivery worker': (options) => createDeliveryWorker({ ...options, store: { loadSecrets: async () => [] } as never }),
    'event log': (options) => openEventLog(options)
  }
  for (const [name, open] of Object.entries(opens)) {
    t.throws(() => open({ redis: 'redis://x', prefix: '{x' }), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /prefix/ }, `${name}: a bad prefix`)
    t.throws(() => open({ redis: 'redis+cluster://h1:1', prefix: 'anvil' }),
      { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /prefix "anvil" needs a hash tag/ }, `${name}: no hash tag on a cluster`)
  }
  t.same(SOURCES.filter(({ text }) => /checkClusterPrefix\(options\.redis/.test(text)).map(({ file }) => file), ['src/redis/checked-prefix.ts'])
})

t.test('each table\'s shape is declared once: an endpoint, a delivery and a message answer their row, column for column', async (t) => {
  const camel = (column: string): string => column.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())
  const answered = (row: { properties: object }, left: string[], rename: Record<string, string> = {}): string[] =>
    Object.keys(row.properties).filter((column) => !left.includes(column)).map((column) => rename[column] ?? camel(column)).sort()
  t.same(Object.keys(EndpointSchema.properties).sort(), [...answered(EndpointRowSchema, ['operational', 'circuit_opened_at', 'headers']), 'headerNames'].sort(),
    'an endpoint: all but its operational bookkeeping, and its custom headers\' names without their values')
  t.same(Object.keys(DeliveryDetailSchema.properties).sort(), [...answered(DeliveryRowSchema, ['job_id', 'resolved', 'job_stalls', 'message_created_at', 'message_tenant', 'message_type']), 'deliveredLater', 'trigger', 'eventType', 'endpointUrl'].sort(),
    'a delivery: all but the worker\'s bookkeeping, which it answers as what made it and whether it was delivered later, with its event\'s type and endpoint\'s URL in a list')
  t.same(Object.keys(DeliverySchema.properties).sort(), Object.keys(DeliveryDetailSchema.properties).filter((key) => !key.endsWith('Headers')).sort(),
    'in a list, without its headers')
  t.same(Object.keys(MessageSchema.properties).sort(),
    answered(OutboxRowSchema, ['next_attempt_at', 'lease_owner', 'lease_until', 'operational', 'ordering_seq'], { attempts: 'dispatchAttempts', last_error: 'lastDispatchError' }),
    'a message: all but its lease, retry clock and place in its key\'s order')
  t.same(SOURCES.filter(({ text }) => /disabledReason:|lastDeliveryAt:|lastDispatchError:/.test(text)).map(({ file }) => file), [], 'no file lists an answer\'s fields again')

  // As the admin API's validator reads an answer's times.
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (value) => !Number.isNaN(Date.parse(value)))
  const at = new Date('2026-12-03T12:00:00.000Z')
  const endpoint = {
    id: 'ep_1', url: 'https://example.com/hook', tenant: null, event_types: ['a.b'], description: '', enabled: false, disabled_reason: 'why',
    scheme: 'stripe' as const, rate_limit: 5, created_at: at, updated_at: at, last_delivery_at: null, last_delivery_status: 'failed' as const, failing_since: at,
    operational: false, circuit_opened_at: null, headers: { 'x-api-key': 'k3y', authorization: 'Bearer t0k' }, signing: 'hmac' as const, public_key: null,
    tls: { ca: 'CA PEM', cert: 'CERT PEM', key: 'anvil:enc:v1:0:sealed', fingerprint: 'AB:CD', subject: 'CN=anvil', expiresAt: at.toISOString() },
    oauth: { tokenUrl: 'https://auth.example.com/token', clientId: 'c', clientSecret: 'anvil:enc:v1:0:sealed', scope: null, audience: 'a', authStyle: 'basic' as const }
  }
  t.ok(Value.Check(EndpointRowSchema, endpoint), 'the sample is a row')
  const answer = EndpointShape.from(endpoint)
  t.ok(Value.Check(EndpointSchema, answer), 'its answer fits the answer\'s schema')
  t.same(answer, {
    id: 'ep_1', url: 'https://example.com/hook', tenant: null, eventTypes: ['a.b'], description: '', enabled: false, disabledReason: 'why',
    scheme: 'stripe', rateLimit: 5, createdAt: at.toISOString(), updatedAt: at.toISOString(), lastDeliveryAt: null, lastDeliveryStatus: 'failed', failingSince: at.toISOString(),
    headerNames: ['authorization', 'x-api-key'], signing: 'hmac', publicKey: null,
    tls: { ca: true, certificate: { fingerprint: 'AB:CD', subject: 'CN=anvil', expiresAt: at.toISOString() } },
    oauth: { tokenUrl: 'https://auth.example.com/token', clientId: 'c', scope: null, audience: 'a', authStyle: 'basic' }
  })
  const delivery = {
    id: '7', message_id: 'msg_1', endpoint_id: 'ep_1', attempt: 1, status: 'success' as const, http_status: 200, duration_ms: 3, error_class: null,
    error: null, response_head: 'ok', request_headers: { 'webhook-id': 'msg_1' }, response_headers: null, payload_sha256: 'ab', created_at: at,
    job_id: 'j', resolved: true, job_stalls: 1, message_created_at: at, message_tenant: null, message_type: 't', erased_at: null
  }
  t.ok(Value.Check(DeliveryRowSchema, delivery), 'the sample is a row')
  t.same(DeliveryShape.from(delivery), {
    id: '7', messageId: 'msg_1', endpointId: 'ep_1', attempt: 1, status: 'success', httpStatus: 200, durationMs: 3, responseHead: 'ok', payloadSha256: 'ab', createdAt: at.toISOString()
  }, 'a delivery leaves out its empty error fields')
  t.same(toDeliveryDetail(delivery), {
    ...DeliveryShape.from(delivery), trigger: 'schedule', deliveredLater: true, requestHeaders: { 'webhook-id': 'msg_1' }
  }, 'with its details: what made it, and the headers it has')
  const message = {
    id: 'msg_1', type: 't', public_type: 'p', tenant: null, data: '{"a":1}', created_at: at, status: 'failed' as const, attempts: 3,
    next_attempt_at: at, last_error: 'boom', lease_owner: null, lease_until: null, dispatched_at: null, operational: false,
    ordering_key: null, ordering_seq: null, traceparent: null, tracestate: null, subject: null
  }
  t.ok(Value.Check(OutboxRowSchema, message), 'the sample is a row')
  t.ok(Value.Check(MessageSchema, { ...MessageShape.from(message), data: JSON.parse(message.data) }), 'a message fits its schema')
})

t.test('one home for runtime SQL: no statement outside src/sql/ but transaction control', async (t) => {
  const statement = /\b(SELECT |INSERT INTO|DELETE FROM|UPDATE [a-z$"{][^ ]* (AS [a-z]+ )?SET|WITH [a-z]+ AS \()/
  t.same(SOURCES.filter(({ file, text }) => !file.startsWith(join('src', 'sql')) && statement.test(text)).map(({ file }) => file), [])
})

t.test('the console takes the server\'s event detail, page and session shapes, and asks the server which features it has', async (t) => {
  const consoleDir = join(ROOT, 'console', 'src')
  const files = readdirSync(consoleDir, { recursive: true, encoding: 'utf8' }).filter((file) => /\.tsx?$/.test(file))
    .map((file) => ({ file, text: readFileSync(join(consoleDir, file), 'utf8') }))
  for (const name of ['EventDetail', 'Page', 'SessionAnswer', 'SessionState', 'Features']) {
    t.same(files.filter(({ text }) => new RegExp(`^(export )?(interface|type) ${name}\\b`, 'm').test(text)).map(({ file }) => file), [], `no ${name} of its own`)
  }
  t.same(files.filter(({ text }) => /no admin route|\.message\.(startsWith|includes)\(/.test(text)).map(({ file }) => file), [], 'no error matched by its text')
  const imports = files.map(({ text }) => text).join('\n')
  for (const from of ['src/event-log/event-detail', 'src/paging/page-type', 'plugins/admin/session-state']) t.ok(imports.includes(`/${from}'`), `it imports ${from}`)
})

t.test('one rule for where the ingress\'s queue is: the worker, replay and the event log, given no queueName or prefix, meet the ingress\'s jobs', async (t) => {
  const shapes = [workerSettings, ReplayOptionsSchema.properties, EventLogOptionsSchema.properties]
    .map(({ queueName, prefix }) => JSON.stringify({ queueName, prefix }))
  t.equal(new Set(shapes).size, 1, 'the same schemas')
  const app = Fastify()
  await app.register(anvil, { redis: redis.url, secret: 'whsec_rules_once_0123456789abcdef' })
  const runs: string[] = []
  // The first run gives up at once, so the event is a dead letter; the replay's run succeeds.
  const worker = createWorker(async (event) => {
    runs.push(event.replayOf ?? 'enqueued')
    if (runs.length === 1) throw new UnrecoverableError('to the dead letters')
  }, { redis: redis.url, sweepIntervalMs: 0 })
  const log = openEventLog({ redis: redis.url })
  const replayer = createReplayer({ redis: redis.url })
  t.teardown(async () => await Promise.all([app.close(), worker.close(), log.close(), replayer.close()]))
  await worker.start()
  await app.anvil.enqueue({ n: 1 }, { eventId: 'evt_rules_once' })
  let letters: Awaited<ReturnType<typeof log.deadLetters>> = { items: [], next: null }
  await eventually('the event log lists the worker\'s dead letter', async () => (letters = await log.deadLetters()).items.length === 1)
  const letter = (letters.items[0] as { id: string }).id
  t.equal((await replayer.replayDeadLetter(letter)).replayedNow, true, 'the replayer finds it')
  await eventually('the worker runs the replay', () => runs.length === 2)
  t.same(runs, ['enqueued', letter], 'on the queue the worker reads')
})

t.test('one reading of a signed URL: Square and Twilio refuse a request with no URL, or one that makes none, alike', async (t) => {
  const payload = Buffer.from('Body=hi')
  for (const provider of ['square', 'twilio'] as const) {
    const header = provider === 'square' ? 'x-square-hmacsha256-signature' : 'x-twilio-signature'
    const scheme = createPresetScheme(provider, { secrets: ['rules-once-secret-0123456789'], toleranceSeconds: DEFAULT_TOLERANCE_SECONDS })
    const headers = { [header]: Buffer.from('x').toString('base64'), 'content-type': 'application/x-www-form-urlencoded' }
    for (const url of [undefined, 'not a url']) {
      t.throws(() => scheme.verify(payload, headers, { url }), { code: 'ANVIL_ERR_SIGNATURE_INVALID' }, `${provider}: ${String(url)}`)
    }
  }
  t.same(SOURCES.filter(({ text }) => text.includes('URL.canParse(request.url)')).map(({ file }) => file), ['src/signing/signed-url.ts'])
})

t.test('one way an option\'s problem is thrown: throwInvalid, as one INVALID_OPTIONS line after its label', async (t) => {
  t.same(SOURCES.filter(({ text }) => /if \(problem !== undefined\) throw new errors\.INVALID_OPTIONS/.test(text)).map(({ file }) => file), ['src/shared/validate.ts'])
  t.throws(() => throwInvalid('retentionDays: Expected integer', 'outbound '), { code: 'ANVIL_ERR_INVALID_OPTIONS', message: /: outbound retentionDays: Expected integer$/ })
  t.doesNotThrow(() => throwInvalid(undefined, 'outbound '))
})
