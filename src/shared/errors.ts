import createError from '@fastify/error'

/**
 * The answers to a request (forged, stale, too large, queue down) carry no stack: it would point at the same
 * line every time, is never logged, and capturing it is paid on every request of a flood of forged ones.
 */
const NO_STACK = false

/** Every error Anvil raises, in one registry. Codes are stable API. */
export const errors = {
  SIGNATURE_MISSING: createError('ANVIL_ERR_SIGNATURE_MISSING', 'Missing signature header %s', 401, Error, NO_STACK),
  SIGNATURE_MALFORMED: createError('ANVIL_ERR_SIGNATURE_MALFORMED', 'Malformed signature header %s', 401, Error, NO_STACK),
  SIGNATURE_INVALID: createError('ANVIL_ERR_SIGNATURE_INVALID', 'Signature does not match', 401, Error, NO_STACK),
  STALE: createError('ANVIL_ERR_STALE', 'Signed timestamp is outside the %s s tolerance', 401, Error, NO_STACK),
  BODY_TOO_LARGE: createError('ANVIL_ERR_BODY_TOO_LARGE', 'Body is larger than %s bytes', 413, Error, NO_STACK),
  REDIS_UNAVAILABLE: createError('ANVIL_ERR_REDIS_UNAVAILABLE', 'Queue unavailable, retry later', 503, Error, NO_STACK),
  BUSY: createError('ANVIL_ERR_BUSY', 'Too many request bodies in flight, retry later', 503, Error, NO_STACK),
  INVALID_OPTIONS: createError('ANVIL_ERR_INVALID_OPTIONS', 'Invalid Anvil options: %s', 500),
  INVALID_CONFIG: createError('ANVIL_ERR_INVALID_CONFIG', 'Invalid configuration: %s', 500),
  INVALID_PAYLOAD: createError('ANVIL_ERR_INVALID_PAYLOAD', 'Invalid payload: %s', 400),
  DEAD_LETTER_NOT_FOUND: createError('ANVIL_ERR_DEAD_LETTER_NOT_FOUND', 'No dead letter with id %s', 404),
  NO_REDIS: createError('ANVIL_ERR_NO_REDIS', 'No Redis: %s', 500),
  DATABASE_UNAVAILABLE: createError('ANVIL_ERR_DATABASE_UNAVAILABLE', 'Database unavailable: %s', 503),
  NOT_MIGRATED: createError('ANVIL_ERR_NOT_MIGRATED', 'The database is not migrated (%s): run `anvil migrate`, or register anvilOutbound with `migrate: true`', 500),
  MIGRATION_CHANGED: createError('ANVIL_ERR_MIGRATION_CHANGED', 'Migration %s was changed after it was applied', 500),
  /** Its message is WRONG_ADMIN_TOKEN or WRONG_PORTAL_LINK: the one who holds a portal link has no admin token. */
  UNAUTHORIZED: createError('ANVIL_ERR_UNAUTHORIZED', '%s', 401, Error, NO_STACK),
  PORTAL_LINK_USED: createError('ANVIL_ERR_PORTAL_LINK_USED', 'This portal link was used: a link opens the portal once; ask for a new one', 410, Error, NO_STACK),
  FORBIDDEN: createError('ANVIL_ERR_FORBIDDEN', 'Forbidden: %s', 403, Error, NO_STACK),
  CSRF: createError('ANVIL_ERR_CSRF', 'Missing or wrong CSRF token (x-csrf-token)', 403, Error, NO_STACK),
  SESSION_STORE_UNAVAILABLE: createError('ANVIL_ERR_SESSION_STORE_UNAVAILABLE', 'Session store (Redis) unavailable, retry later or use the Bearer token', 503, Error, NO_STACK),
  RATE_LIMITED: createError('ANVIL_ERR_RATE_LIMITED', 'Too many attempts, retry in %s', 429, Error, NO_STACK),
  NOT_FOUND: createError('ANVIL_ERR_NOT_FOUND', '%s', 404),
  BAD_REQUEST: createError('ANVIL_ERR_BAD_REQUEST', '%s', 400),
  OUTBOUND_ADDRESS_REFUSED: createError('ANVIL_ERR_OUTBOUND_ADDRESS_REFUSED', 'Outbound connection to %s refused: a loopback, private, link-local or reserved address that is not allowlisted', 403, Error, NO_STACK),
  INVALID_ENDPOINT: createError('ANVIL_ERR_INVALID_ENDPOINT', 'Invalid endpoint: %s', 400),
  ENCRYPTION_KEY_REQUIRED: createError('ANVIL_ERR_ENCRYPTION_KEY_REQUIRED', '%s is stored encrypted and no encryption key is set: set encryptionKey (ANVIL_ENCRYPTION_KEY) where the admin API and the delivery worker run', 400, Error, NO_STACK),
  AT_REST_KEY: createError('ANVIL_ERR_AT_REST_KEY', 'Encryption at rest: %s', 500, Error, NO_STACK),
  INVALID_MESSAGE: createError('ANVIL_ERR_INVALID_MESSAGE', 'Invalid message: %s', 400),
  INVALID_SCHEMA: createError('ANVIL_ERR_INVALID_SCHEMA', 'The schema of event type %s is not a valid JSON Schema (draft-07): %s', 400),
  SCHEMA_TOO_LARGE: createError('ANVIL_ERR_SCHEMA_TOO_LARGE', 'Schema of %s is too large: %s', 400),
  SCHEMA_TOO_SLOW: createError('ANVIL_ERR_SCHEMA_TOO_SLOW', 'Checking against the schema of %s took over %s ms: simplify the schema (uniqueItems over objects or arrays, anyOf or oneOf that recurse through $ref) or the data', 400, Error, NO_STACK),
  ENDPOINT_QUOTA: createError('ANVIL_ERR_ENDPOINT_QUOTA', 'Tenant %s has its %s endpoints (portal.limits.endpointsPerTenant): delete one, or ask the operator for more', 403, Error, NO_STACK),
  TENANT_RATE_LIMITED: createError('ANVIL_ERR_TENANT_RATE_LIMITED', 'Too many %s: at most %s a minute (portal.limits.%s); retry when the minute ends (Retry-After)', 429, Error, NO_STACK),
  PAYLOAD_TOO_LARGE: createError('ANVIL_ERR_PAYLOAD_TOO_LARGE', 'Message data is %s bytes, over the %s-byte limit', 413),
  INVALID_FILTER: createError('ANVIL_ERR_INVALID_FILTER', 'Invalid filter: %s', 400, Error, NO_STACK),
  ONCE_TAKEN: createError('ANVIL_ERR_ONCE_TAKEN', 'Another run of event %s recorded a once() effect first (group commit claims them at its commit); this attempt fails and its retry returns the stored result', 500),
  EVENT_NOT_FOUND: createError('ANVIL_ERR_EVENT_NOT_FOUND', 'No event with id %s in the journal', 404, Error, NO_STACK),
  REPLAY_RUN_NOT_FOUND: createError('ANVIL_ERR_REPLAY_RUN_NOT_FOUND', 'No replay run with id %s', 404, Error, NO_STACK),
  FOREIGN_QUEUE: createError('ANVIL_ERR_FOREIGN_QUEUE', 'Queue %s belongs to deployment %s, %s', 500),
  ROUTER_STARTED: createError('ANVIL_ERR_ROUTER_STARTED', 'Cannot add a handler for %s: the router is in use by a started worker (or has dispatched an event); register every handler before starting it', 500),
  INTERNAL: createError('ANVIL_ERR_INTERNAL', 'Internal Server Error', 500)
} as const

export const WRONG_ADMIN_TOKEN = 'Missing or wrong admin token'
export const WRONG_PORTAL_LINK = 'Wrong portal link: it was changed, has expired or was revoked; ask for a new one'

export type AnvilError = InstanceType<(typeof errors)[keyof typeof errors]>

export function isAnvilError (err: unknown): err is AnvilError {
  const code = (err as { code?: unknown } | null)?.code
  return err instanceof Error && typeof code === 'string' && code.startsWith('ANVIL_ERR_')
}

/** The body of every error Anvil's routes answer with. */
export interface ErrorReply { error: string, code: string }

/**
 * What a failed request answers: an Anvil error its own message and code; any other 5xx INTERNAL, its details
 * left to the log; any other 4xx its message, with `foreignCode` (the caller's choice of code for it).
 */
export function errorReply (error: { message: string }, statusCode: number, foreignCode: string): ErrorReply {
  if (isAnvilError(error)) return { error: error.message, code: error.code }
  if (statusCode >= 500) return { error: new errors.INTERNAL().message, code: 'ANVIL_ERR_INTERNAL' }
  return { error: error.message, code: foreignCode }
}
