/**
 * The settings of what needs PostgreSQL or reaches out: the database, the journal, outgoing webhooks and
 * forwarding (their SSRF guard's exceptions), and the admin API.
 */
import { Type } from '@sinclair/typebox'
import { redactUrl } from '../../src/redis/connect.js'
import { databaseUrlProblem } from '../../src/db/database-url.js'
import { ConsoleUrl, MAX_RETRY_STEP_MS, RetrySchedule, SCHEMA_NAME_RULE, SchemaName, Whole } from '../../src/shared/schemas.js'
import { DEFAULT_JOURNAL_RETENTION_DAYS, GroupCommitSchema, JournalOptionsSchema, JournalQueueSchema, SubjectPath } from '../../src/journal/journal-options.js'
import { netsProblem } from '../../src/send/cidr.js'
import { DEFAULT_DISPATCH_RETRY, DEFAULT_OUTBOX_RETENTION_DAYS, DispatchOptionsSchema, OutboundOptionsSchema } from '../../src/outbox/outbound-options.js'
import { STANDARD_WEBHOOKS_SCHEDULE_MS } from '../../src/delivery/delivery-schedule.js'
import { DEFAULT_ADMIN_PREFIX, DEFAULT_DB_SCHEMA, MIN_ADMIN_TOKEN_LENGTH } from '../../src/shared/constants.js'
import { define, toInteger, toSchedule, whole } from './setting.js'
import { PortalThemeSchema } from '../../src/portal/portal-theme.js'
import { ENCRYPTION_KEY_RULE, encryptionKeyProblem } from '../../src/at-rest/encryption-keys.js'
import { NO_RETRIES } from './cli-constants.js'
import { FrameAncestors, PortalPublicUrl } from '../../src/portal/portal-options.js'
import { DEFAULT_PORTAL_LIMITS, PortalLimitsSchema } from '../../src/portal/portal-limits.js'

/** How a list of networks for the SSRF guard is read (ANVIL_OUTBOUND_ALLOW_NETS, ANVIL_FORWARD_ALLOW_NETS). */
const allowNets = {
  expected: 'comma-separated networks such as 127.0.0.0/8,10.0.0.0/8',
  schema: Type.String({ minLength: 1 }),
  breaks: (nets: string): string | undefined => {
    const problem = netsProblem(nets)
    return problem === undefined ? undefined : `must be comma-separated networks (${problem})`
  }
}

/** The admin API's base: a server's bare URL (`http://host:3000`) means its default prefix, `/admin`. */
export function adminBase (url: string): string {
  const trimmed = url.replace(/\/+$/, '')
  return new URL(trimmed).pathname === '/' ? trimmed + DEFAULT_ADMIN_PREFIX : trimmed
}

const DATABASE_URL_EXPECTED = 'a postgres:// or postgresql:// URL'

export const OUTBOUND_SETTINGS = {
  databaseUrl: define({
    env: 'ANVIL_DATABASE_URL', key: 'databaseUrl', flag: '--database-url', value: '<url>', description: 'PostgreSQL URL',
    expected: DATABASE_URL_EXPECTED, schema: Type.String({ minLength: 1 }),
    breaks: (url) => databaseUrlProblem(url) === undefined ? undefined : `must be ${DATABASE_URL_EXPECTED}`,
    show: redactUrl
  }),
  dbSchema: define({
    env: 'ANVIL_DB_SCHEMA', key: 'dbSchema', flag: '--db-schema', value: '<name>', default: DEFAULT_DB_SCHEMA,
    description: "the schema Anvil's tables live in", expected: SCHEMA_NAME_RULE, schema: SchemaName()
  }),
  consoleUrl: define({
    env: 'ANVIL_CONSOLE_URL', key: 'consoleUrl', flag: '--console-url', value: '<url>',
    description: "with ANVIL_DATABASE_URL: the console's address (https://anvil.example.com/admin/console/), which operational events link into for the operator; unset: they carry no such link",
    expected: 'an http:// or https:// URL without a fragment', schema: ConsoleUrl()
  }),
  journalRetentionDays: define({
    env: 'ANVIL_JOURNAL_RETENTION_DAYS', key: 'journalRetentionDays', flag: '--journal-retention-days', value: '<days>', default: String(DEFAULT_JOURNAL_RETENTION_DAYS),
    description: 'with ANVIL_DATABASE_URL: the worker deletes journal rows older than this, 0 keeps them',
    ...whole(JournalOptionsSchema.properties.retentionDays, 'days')
  }),
  journalQueue: define({
    env: 'ANVIL_JOURNAL_QUEUE', key: 'journalQueue', flag: '--journal-queue', value: '<queue>', default: 'bullmq',
    description: "with ANVIL_DATABASE_URL: where events wait for their handler; postgres: in the journal's database (anvil serve inserts them, anvil worker claims them), not BullMQ",
    expected: 'bullmq or postgres', schema: JournalQueueSchema
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
  journalSubjectPath: define({
    env: 'ANVIL_JOURNAL_SUBJECT_PATH', key: 'journalSubjectPath', flag: '--journal-subject-path', value: '<path>',
    description: "with ANVIL_DATABASE_URL: a dotted path into each event's JSON body (data.object.customer) whose value tags the event with a data subject, which anvil subjects erase erases; unset: none",
    expected: 'a dotted path such as data.object.customer', schema: SubjectPath()
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
  encryptionKey: define({
    // No flag, as for the admin token: a key on the command line shows in `ps` and in shell history.
    env: 'ANVIL_ENCRYPTION_KEY', key: 'encryptionKey',
    description: 'encrypts what endpoints keep for their receivers at rest (client-certificate keys, OAuth client secrets, signing secrets, header values); comma-separated to rotate, the first encrypts; the admin API and the delivery worker need the same keys',
    expected: ENCRYPTION_KEY_RULE, schema: Type.String({ minLength: 1 }),
    breaks: (raw) => encryptionKeyProblem(raw) === undefined ? undefined : `must be ${ENCRYPTION_KEY_RULE}`,
    show: (raw) => `${raw.split(',').length} key(s)`
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
    expected: 'an http:// or https:// URL', schema: Type.String({ pattern: '^https?://\\S+$' }), show: redactUrl,
    to: adminBase
  }),
  portalPublicUrl: define({
    env: 'ANVIL_PORTAL_PUBLIC_URL', key: 'portalPublicUrl', flag: '--portal-public-url', value: '<url>',
    description: "where tenant portal links start, e.g. https://hooks.example.com (anvil worker: a tenant's own operational events link into the portal there); unset: the minting request's origin, and those events carry no link",
    expected: 'an http(s) URL with no query or fragment', schema: PortalPublicUrl()
  }),
  portalFrameAncestors: define({
    env: 'ANVIL_PORTAL_FRAME_ANCESTORS', key: 'portalFrameAncestors', flag: '--portal-frame-ancestors', value: '<origins>',
    description: 'origins that may embed the tenant portal page in a frame, e.g. https://app.example.com; unset: none',
    expected: "comma-separated origins such as https://app.example (a leading *. allowed) or 'self'", schema: FrameAncestors(),
    parse: (raw) => raw.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  }),
  portalLimits: define({
    env: 'ANVIL_PORTAL_LIMITS', key: 'portalLimits', flag: '--portal-limits', value: '<limit=n,…>',
    description: 'what one tenant\'s portal tokens may make, e.g. endpointsPerTenant=100,testEventsPerMinute=20; unset: each limit\'s default',
    default: Object.entries(DEFAULT_PORTAL_LIMITS).map(([name, value]) => `${name}=${value}`).join(','),
    expected: `comma-separated limit=number pairs, the limits being ${Object.keys(PortalLimitsSchema.properties).join(', ')}`,
    schema: PortalLimitsSchema,
    parse: (raw) => Object.fromEntries(raw.split(',').map((pair) => pair.trim()).filter((pair) => pair !== '').map((pair) => {
      const [name = '', value = ''] = pair.split('=')
      return [name.trim(), toInteger(value)]
    }))
  }),
  portalTheme: define({
    env: 'ANVIL_PORTAL_THEME', key: 'portalTheme', flag: '--portal-theme', value: '<json>',
    description: 'the tenant portal\'s look, as JSON: {"mode":"dark","primaryColor":"#4f46e5","fontFamily":"Inter, sans-serif","logoUrl":"https://…"}',
    expected: 'a JSON object with mode (light or dark), primaryColor (#rrggbb), fontFamily (family names), logoUrl (https)', schema: PortalThemeSchema,
    // Not JSON: left as the text, which the schema then refuses with the expected line.
    parse: (raw) => { try { return JSON.parse(raw) as unknown } catch { return raw } }
  }),
  adminPort: define({
    env: 'ANVIL_ADMIN_PORT', key: 'adminPort', flag: '--admin-port', value: '<port>',
    description: 'serve the admin API on this port instead of the main one', ...whole(Whole(0, 65535))
  }),
  limit: define({
    key: 'limit', flag: '--limit', value: '<n>', description: 'with --all: at most this many',
    ...whole(Whole(1))
  })
}
