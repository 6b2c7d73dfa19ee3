/**
 * An endpoint's outcomes over a time window, for the portal's endpoint list and overview. Each reads
 * `deliveries_endpoint_created` (migration 0012) alone, over one endpoint's attempts in the window: the cost
 * follows that endpoint's traffic in the window, not the size of the log.
 */
import { qualify } from '../db/qualify.js'

/**
 * Each listed endpoint's attempts since `$2`: successes, failures, the last attempt's time. `$1` the endpoints'
 * ids; `$3` a tenant, or null: only that tenant's endpoints answer (a portal token's view).
 */
export const summaries = (schema: string): string =>
  `SELECT e.id AS endpoint_id, s.success, s.failed, s.last_at FROM ${qualify(schema, 'endpoints')} e, LATERAL (
     SELECT count(*) FILTER (WHERE d.status = 'success')::int AS success, count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
       max(d.created_at) AS last_at
     FROM ${qualify(schema, 'deliveries')} d WHERE d.endpoint_id = e.id AND d.created_at >= $2) s
   WHERE e.id = ANY ($1::text[]) AND ($3::text IS NULL OR e.tenant = $3)`

/**
 * One endpoint's attempts from `$2` on, in buckets of `$3` seconds (the bucket's start, its successes and
 * failures), and the window's p50 duration of the attempts that got an answer. `$1` the endpoint.
 */
export const buckets = (schema: string): string =>
  `SELECT to_timestamp(floor(extract(epoch FROM created_at) / $3) * $3) AS start,
     count(*) FILTER (WHERE status = 'success')::int AS success, count(*) FILTER (WHERE status = 'failed')::int AS failed
   FROM ${qualify(schema, 'deliveries')} WHERE endpoint_id = $1 AND created_at >= $2
   GROUP BY 1 ORDER BY 1`

/** The median duration of `$1` endpoint's completed attempts since `$2`, in ms; null with none. */
export const p50 = (schema: string): string =>
  `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50_ms
   FROM ${qualify(schema, 'deliveries')} WHERE endpoint_id = $1 AND created_at >= $2 AND status <> 'started'`
