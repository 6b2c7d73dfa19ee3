/**
 * Endpoints' outcomes over a time window (src/sql/delivery-stats.ts): the portal's endpoint list (each endpoint's
 * success rate and last attempt over a day) and an endpoint's overview (attempts by outcome over time, p50
 * latency). `started` attempts (in flight, or their outcome unknown) count in neither outcome.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { Database } from '../db/database.js'
import { Nullable } from '../shared/schemas.js'
import * as sql from '../sql/delivery-stats.js'

/** How far back the stats look. @defaultValue 24 (hours) */
export const DEFAULT_STATS_HOURS = 24
export const MAX_STATS_HOURS = 30 * 24
/** The overview's chart: the window in this many equal buckets. */
export const STATS_BUCKETS = 24
/** Endpoints per summary request: the endpoint list's page. */
export const MAX_STATS_ENDPOINTS = 200

const Time = () => Type.String({ format: 'date-time' })

const Outcomes = {
  success: Type.Integer(),
  failed: Type.Integer(),
  /** success / (success + failed); null with neither. */
  successRate: Nullable(Type.Number())
}

export const EndpointSummarySchema = Type.Object({ endpointId: Type.String(), ...Outcomes, lastAttemptAt: Nullable(Time()) })
export type EndpointSummary = Static<typeof EndpointSummarySchema>

export const EndpointStatsSchema = Type.Object({
  endpointId: Type.String(),
  since: Time(),
  until: Time(),
  bucketSeconds: Type.Integer(),
  ...Outcomes,
  /** The median time of the attempts that ended, in ms; null with none. */
  p50Ms: Nullable(Type.Integer()),
  buckets: Type.Array(Type.Object({ start: Time(), success: Type.Integer(), failed: Type.Integer() }))
})
export type EndpointStats = Static<typeof EndpointStatsSchema>

const rate = (success: number, failed: number): number | null => success + failed === 0 ? null : success / (success + failed)

export type DeliveryStats = ReturnType<typeof createDeliveryStats>

export function createDeliveryStats (db: Database) {
  return {
    /** Each endpoint of `ids` (of `tenant` only, when given) over the last `hours`; an unknown or foreign id is left out. */
    async summaries (ids: string[], hours: number, tenant?: string, now = Date.now()): Promise<EndpointSummary[]> {
      const since = new Date(now - hours * 3_600_000)
      const { rows } = await db.pool.query<{ endpoint_id: string, success: number, failed: number, last_at: Date | null }>(
        sql.summaries(db.schema), [ids, since, tenant ?? null])
      return rows.map((row) => ({
        endpointId: row.endpoint_id, success: row.success, failed: row.failed, successRate: rate(row.success, row.failed), lastAttemptAt: row.last_at?.toISOString() ?? null
      }))
    },

    /** One endpoint over the last `hours`, in `STATS_BUCKETS` buckets (empty ones included), oldest first. */
    async endpoint (endpointId: string, hours: number, now = Date.now()): Promise<EndpointStats> {
      const bucketSeconds = Math.max(60, Math.round(hours * 3600 / STATS_BUCKETS))
      // Buckets aligned on their size, so the same hour is one bucket on every request.
      const first = Math.floor((now - hours * 3_600_000) / (bucketSeconds * 1000)) * bucketSeconds * 1000
      const since = new Date(first)
      const [counted, median] = await Promise.all([
        db.pool.query<{ start: Date, success: number, failed: number }>(sql.buckets(db.schema), [endpointId, since, bucketSeconds]),
        db.pool.query<{ p50_ms: number | null }>(sql.p50(db.schema), [endpointId, since])
      ])
      const byStart = new Map(counted.rows.map((row) => [row.start.getTime(), row]))
      const buckets: EndpointStats['buckets'] = []
      for (let start = first; start <= now; start += bucketSeconds * 1000) {
        const row = byStart.get(start)
        buckets.push({ start: new Date(start).toISOString(), success: row?.success ?? 0, failed: row?.failed ?? 0 })
      }
      const success = buckets.reduce((sum, b) => sum + b.success, 0)
      const failed = buckets.reduce((sum, b) => sum + b.failed, 0)
      return {
        endpointId, since: since.toISOString(), until: new Date(now).toISOString(), bucketSeconds,
        success, failed, successRate: rate(success, failed), p50Ms: median.rows[0]?.p50_ms ?? null, buckets
      }
    }
  }
}
