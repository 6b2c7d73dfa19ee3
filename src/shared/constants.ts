/** Defaults, named once. Times are milliseconds unless the name says otherwise. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'
export const DEFAULT_QUEUE_NAME = 'webhooks'
/** A hash tag keeps every key of a queue in one Redis Cluster slot. */
export const DEFAULT_PREFIX = '{anvil}'
export const DEFAULT_PATH = '/webhooks'
export const DEFAULT_METRICS_PATH = '/metrics'
/** Where `anvilAdmin` serves its routes; the CLI adds it to a bare server URL. */
export const DEFAULT_ADMIN_PREFIX = '/admin'
export const DEFAULT_SOURCE = 'default'
export const DEFAULT_BODY_LIMIT = 1024 * 1024
/** Fastify holds a body in memory until it is verified: a gigabyte is past any webhook. */
export const MAX_BODY_LIMIT = 1024 * 1024 * 1024
/**
 * The bytes of webhook bodies being read at once, by their Content-Length (the body limit when none is
 * given); past it a request is answered 503 before its body is read, so slow or stalled senders cannot
 * hold the process's memory.
 */
export const DEFAULT_MAX_IN_FLIGHT_BYTES = 64 * 1024 * 1024
/** 72 h covers Stripe's three days of redelivery. */
export const DEFAULT_DEDUPE_WINDOW_MS = 72 * 60 * 60 * 1000
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = [1000, 5000, 30000, 300000]
/** A 503 must come back fast enough for the provider to retry; Redis gets this long. */
export const DEFAULT_ENQUEUE_TIMEOUT_MS = 1500
export const DEFAULT_RETRY_AFTER_SECONDS = 5
export const DEFAULT_CONCURRENCY = 10
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10000
export const DEFAULT_SWEEP_INTERVAL_MS = 30000
/** Jobs that failed within this much before the last sweep are looked at again (clock skew between workers). */
export const SWEEP_OVERLAP_MS = 5 * 60 * 1000

export const DEFAULT_RETENTION = Object.freeze({
  /** Completed jobs: their dedupe key outlives them, so they are only kept for inspection. */
  completedAgeSeconds: 60 * 60,
  completedCount: 1000,
  /** Finally-failed jobs on the main queue; their dead letters outlive them. */
  failedAgeSeconds: 7 * 24 * 60 * 60,
  failedCount: 10000,
  /** Dead letters stay until replayed and then this long; must exceed failedAgeSeconds. */
  deadAgeSeconds: 14 * 24 * 60 * 60
})

export const DEAD_LETTER_SUFFIX = '.dead'
export const JOB_NAME = 'webhook'
/** Job ids: a letter first, so BullMQ never takes them for integers, and no ':'. */
export const EVENT_JOB_PREFIX = 'e_'
export const DEAD_JOB_PREFIX = 'd_'
export const REPLAY_JOB_PREFIX = 'r_'
/** A journal replay's jobs: `r_j<generation>_<md5 of the event id>` (src/sql/webhook-events.ts). */
export const JOURNAL_REPLAY_JOB_PREFIX = `${REPLAY_JOB_PREFIX}j`
export const STALLED_MESSAGE = 'job stalled more than allowable limit'

/** PostgreSQL: every table, index and migration record of Anvil lives in this schema. */
export const DEFAULT_DB_SCHEMA = 'anvil'
/** A pool's connection attempt, and any one statement, gives up after this long. */
export const DEFAULT_DB_CONNECT_TIMEOUT_MS = 5000
export const DEFAULT_DB_STATEMENT_TIMEOUT_MS = 30000
export const DEFAULT_DB_POOL_SIZE = 10
/** An admin token an attacker could guess in a day of tries is no token: 16 characters at least. */
export const MIN_ADMIN_TOKEN_LENGTH = 16
