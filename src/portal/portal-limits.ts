/**
 * What one tenant's portal tokens may make: endpoints per tenant, and per minute its test events, hand retries and
 * (per token) its writes. The counts are PostgreSQL's (migration 0015), one statement per request, so every
 * replica shares them; the operator's own requests (the admin token, a console session) are never counted.
 */
import { createHash } from 'node:crypto'
import { Type, type Static } from '@sinclair/typebox'
import type { Database } from '../db/database.js'
import { errors } from '../shared/errors.js'
import { Whole } from '../shared/schemas.js'
import * as sql from '../sql/portal.js'

/** Defaults, named once. */
export const DEFAULT_PORTAL_LIMITS = Object.freeze({
  endpointsPerTenant: 50,
  testEventsPerMinute: 10,
  retriesPerMinute: 30,
  writesPerMinute: 60,
  testEventBytes: 16 * 1024
})

export const PortalLimitsSchema = Type.Object({
  /** The endpoints a tenant may have for its portal tokens to create one (an operator's creates are never refused). @defaultValue 50 */
  endpointsPerTenant: Type.Optional(Whole(0, 1_000_000)),
  /** Test events a tenant's portal tokens may send in a minute. @defaultValue 10 */
  testEventsPerMinute: Type.Optional(Whole(0, 1_000_000)),
  /** Hand retries (a delivery's retry, an endpoint's recover) a tenant's portal tokens may ask for in a minute. @defaultValue 30 */
  retriesPerMinute: Type.Optional(Whole(0, 1_000_000)),
  /** Requests that change something (create, change, delete, rotate, test, retry) one portal token may make in a minute. @defaultValue 60 */
  writesPerMinute: Type.Optional(Whole(0, 1_000_000)),
  /** The largest test event's data a portal token may send, as JSON bytes (under the service's `maxPayloadBytes`). @defaultValue 16384 */
  testEventBytes: Type.Optional(Whole(2, 16 * 1024 * 1024))
}, { additionalProperties: false })
export type PortalLimits = Static<typeof PortalLimitsSchema>

/** The limits counted per minute, and what a refusal calls what was counted. */
const COUNTED = { testEventsPerMinute: 'test events', retriesPerMinute: 'hand retries', writesPerMinute: 'writes' } as const
export type CountedLimit = keyof typeof COUNTED

/** A minute's counts live an hour; every this many counts, a process deletes the older ones. */
const PRUNE_EVERY = 1000

export interface PortalQuotas {
  readonly limits: Readonly<Required<PortalLimits>>
  /** Counts one request of `key` (a tenant, or a portal token) against `limit`; past it 429 TENANT_RATE_LIMITED. */
  take (limit: CountedLimit, key: string): Promise<void>
}

/** A portal token's key in the counts: not the token itself, which would let a reader of the table use it. */
export const tokenKey = (token: string): string => createHash('sha256').update(token).digest('base64url').slice(0, 22)

export function createPortalQuotas (db: Database, limits: PortalLimits = {}): PortalQuotas {
  const resolved = { ...DEFAULT_PORTAL_LIMITS, ...limits }
  let counted = 0
  return {
    limits: resolved,
    async take (limit, key) {
      const { rows } = await db.pool.query<{ count: number, seconds_left: number }>(sql.countRequest(db.schema), [`${limit}:${key}`])
      if (++counted % PRUNE_EVERY === 0) void db.pool.query(sql.pruneCounts(db.schema)).catch(() => {})
      const row = rows[0] as { count: number, seconds_left: number }
      if (row.count > resolved[limit]) {
        throw Object.assign(new errors.TENANT_RATE_LIMITED(COUNTED[limit], resolved[limit], limit), { retryAfterSeconds: Math.max(1, row.seconds_left) })
      }
    }
  }
}
